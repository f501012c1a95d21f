#include "routines/norm/kbench_backends.hpp"

#include "kbench/cuda_check.hpp"
#include "kernels/norm/layernorm.hpp"
#include "kernels/norm/rmsnorm.hpp"
#include "kernels/norm/rmsnorm_fp4.hpp"
#include "routines/norm/norm_case.hpp"

namespace kbench {
namespace {

class CudaNormOperation final : public Operation {
 public:
  explicit CudaNormOperation(const NormCase& problem) : problem_(problem) {}
  void launch(cudaStream_t stream, int copy) override {
    const NormProblem& p = problem_.problem();
    if (p.fp4()) {
      KBENCH_CUDA_CHECK(kernels::launch_rmsnorm_fp4(problem_.fp4_params(copy), stream));
    } else if (p.layernorm()) {
      KBENCH_CUDA_CHECK(kernels::launch_layernorm_quant(problem_.layernorm_params(copy), stream));
    } else {
      KBENCH_CUDA_CHECK(kernels::launch_rmsnorm(problem_.params(copy), stream));
    }
  }

 private:
  const NormCase& problem_;
};

class CudaNormBackend final : public BackendFor<NormCase> {
 public:
  CudaNormBackend() : BackendFor({"cuda", "kbench", "sm_75+ (the built architectures; default sm_90a)"}) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (kernels::rmsnorm_kernel_available() != cudaSuccess) {
      (void)cudaGetLastError();
      return Support::no("this build has no kernel image for sm_" + std::to_string(device.cc_major * 10 + device.cc_minor) +
                         "; rebuild with CMAKE_CUDA_ARCHITECTURES including it");
    }
    return Support::yes();
  }

 protected:
  [[nodiscard]] Support implements(const NormCase& problem) const override {
    const char* why = nullptr;
    if (problem.problem().fp4()) why = kernels::rmsnorm_fp4_unsupported(problem.fp4_params(NormCase::kNoCopy));
    if (problem.problem().layernorm()) {
      why = kernels::layernorm_quant_unsupported(problem.layernorm_params(NormCase::kNoCopy));
    }
    return why == nullptr ? Support::yes() : Support::no(why);
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(NormCase& problem, cudaStream_t) const override {
    return std::make_unique<CudaNormOperation>(problem);
  }
};

}  // namespace

std::unique_ptr<Backend> make_norm_cuda_backend() { return std::make_unique<CudaNormBackend>(); }

}  // namespace kbench
