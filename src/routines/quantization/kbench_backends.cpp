#include "routines/quantization/kbench_backends.hpp"

#include "kbench/cuda_check.hpp"
#include "kernels/quantization/quantize.hpp"
#include "routines/quantization/quant_case.hpp"

namespace kbench {
namespace {

class CudaQuantOperation final : public Operation {
 public:
  explicit CudaQuantOperation(const QuantCase& problem) : problem_(problem) {}
  void launch(cudaStream_t stream, int copy) override {
    KBENCH_CUDA_CHECK(kernels::launch_quantize(problem_.params(copy), stream));
  }

 private:
  const QuantCase& problem_;
};

class CudaQuantBackend final : public BackendFor<QuantCase> {
 public:
  // Software FP4 / UE8M0 conversions: any GPU the build has code for, Hopper included (the
  // reference's kernels need SM100+).
  CudaQuantBackend() : BackendFor({"cuda", "kbench", "sm_75+ (the built architectures; default sm_90a)"}) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (kernels::quantize_kernel_available() != cudaSuccess) {
      (void)cudaGetLastError();
      return Support::no("this build has no kernel image for sm_" + std::to_string(device.cc_major * 10 + device.cc_minor) +
                         "; rebuild with CMAKE_CUDA_ARCHITECTURES including it");
    }
    return Support::yes();
  }

 protected:
  [[nodiscard]] Support implements(const QuantCase&) const override { return Support::yes(); }
  [[nodiscard]] std::unique_ptr<Operation> bind(QuantCase& problem, cudaStream_t) const override {
    return std::make_unique<CudaQuantOperation>(problem);
  }
};

}  // namespace

std::unique_ptr<Backend> make_quant_cuda_backend() { return std::make_unique<CudaQuantBackend>(); }

}  // namespace kbench
