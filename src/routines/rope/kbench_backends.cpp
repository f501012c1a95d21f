#include "routines/rope/kbench_backends.hpp"

#include "kbench/cuda_check.hpp"
#include "kernels/rope/rope.hpp"
#include "routines/rope/rope_case.hpp"
#include "routines/rope/rope_quantize_case.hpp"

namespace kbench {
namespace {

// kbench's RoPE kernels, for the float routines (RopeCase, launch_rope) and the FP8 ones
// (RopeQuantizeCase, launch_rope_quantize).
template <class FamilyCase>
struct Kernel;

template <>
struct Kernel<RopeCase> {
  static cudaError_t launch(const RopeCase& c, int copy, cudaStream_t stream) {
    return kernels::launch_rope(c.params(copy), stream);
  }
  static cudaError_t available() { return kernels::rope_kernel_available(); }
};

template <>
struct Kernel<RopeQuantizeCase> {
  static cudaError_t launch(const RopeQuantizeCase& c, int copy, cudaStream_t stream) {
    return kernels::launch_rope_quantize(c.params(copy), stream);
  }
  static cudaError_t available() { return kernels::rope_quantize_kernel_available(); }
};

template <class FamilyCase>
class CudaRopeOperation final : public Operation {
 public:
  explicit CudaRopeOperation(const FamilyCase& problem) : problem_(problem) {}
  void launch(cudaStream_t stream, int copy) override { KBENCH_CUDA_CHECK(Kernel<FamilyCase>::launch(problem_, copy, stream)); }

 private:
  const FamilyCase& problem_;
};

template <class FamilyCase>
class CudaRopeBackend final : public BackendFor<FamilyCase> {
 public:
  CudaRopeBackend() : BackendFor<FamilyCase>({"cuda", "kbench", "sm_75+ (the built architectures; default sm_90a)"}) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (Kernel<FamilyCase>::available() != cudaSuccess) {
      return Support::no("this build has no kernel image for sm_" + std::to_string(device.cc_major * 10 + device.cc_minor) +
                         "; rebuild with CMAKE_CUDA_ARCHITECTURES including it");
    }
    return Support::yes();
  }

 protected:
  // make_case refuses the shapes the kernels do not take (16-byte vectors), so every case runs.
  [[nodiscard]] Support implements(const FamilyCase&) const override { return Support::yes(); }
  [[nodiscard]] std::unique_ptr<Operation> bind(FamilyCase& problem, cudaStream_t) const override {
    return std::make_unique<CudaRopeOperation<FamilyCase>>(problem);
  }
};

}  // namespace

std::unique_ptr<Backend> make_rope_cuda_backend() { return std::make_unique<CudaRopeBackend<RopeCase>>(); }
std::unique_ptr<Backend> make_rope_quantize_cuda_backend() { return std::make_unique<CudaRopeBackend<RopeQuantizeCase>>(); }

}  // namespace kbench
