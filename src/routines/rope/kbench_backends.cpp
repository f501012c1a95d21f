#include "routines/rope/kbench_backends.hpp"

#include "kbench/cuda_check.hpp"
#include "kernels/rope/rope.hpp"
#include "routines/rope/rope_case.hpp"

namespace kbench {
namespace {

class CudaRopeOperation final : public Operation {
 public:
  explicit CudaRopeOperation(const RopeCase& problem) : problem_(problem) {}
  void launch(cudaStream_t stream, int copy) override { KBENCH_CUDA_CHECK(kernels::launch_rope(problem_.params(copy), stream)); }

 private:
  const RopeCase& problem_;
};

class CudaRopeBackend final : public BackendFor<RopeCase> {
 public:
  CudaRopeBackend() : BackendFor({"cuda", "kbench", "sm_75+ (the built architectures; default sm_90a)"}) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (kernels::rope_kernel_available() != cudaSuccess) {
      return Support::no("this build has no kernel image for sm_" + std::to_string(device.cc_major * 10 + device.cc_minor) +
                         "; rebuild with CMAKE_CUDA_ARCHITECTURES including it");
    }
    return Support::yes();
  }

 protected:
  // make_case refuses the shapes the kernel does not take (16-byte vectors), so every case runs.
  [[nodiscard]] Support implements(const RopeCase&) const override { return Support::yes(); }
  [[nodiscard]] std::unique_ptr<Operation> bind(RopeCase& problem, cudaStream_t) const override {
    return std::make_unique<CudaRopeOperation>(problem);
  }
};

}  // namespace

std::unique_ptr<Backend> make_rope_cuda_backend() { return std::make_unique<CudaRopeBackend>(); }

}  // namespace kbench
