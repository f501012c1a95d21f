#include "routines/gemm/cudnn_backends.hpp"

#include <vector>

#include "backends/cudnn/cudnn_fp8_matmul.hpp"
#include "kbench/cuda_check.hpp"

namespace kbench {
namespace {

backends::CudnnFp8MatmulShape matmul_shape(const GemmProblem& p) {
  return {p.batch, p.m, p.n, p.k, p.a_dtype, p.b_dtype, p.out_dtype};
}

class CudnnGemmOperation final : public Operation {
 public:
  CudnnGemmOperation(const GemmCase& problem, cudaStream_t stream)
      : problem_(problem),
        matmul_(make_vendor_object<backends::CudnnFp8Matmul>("cuDNN", matmul_shape(problem.problem()))) {
    launch(stream, 0);  // cuDNN loads its kernels on first use: once eagerly, outside graph capture
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void launch(cudaStream_t stream, int copy) override {
    const GemmOperands o = problem_.operands(copy);
    matmul_->run(o.a, o.b, o.a_scale, o.b_scale, o.out, stream);
  }

 private:
  const GemmCase& problem_;
  std::unique_ptr<backends::CudnnFp8Matmul> matmul_;
};

}  // namespace

Support CudnnGemmBackend::can_run_on(const DeviceInfo& device) const {
  if (device.cc_major * 10 + device.cc_minor < 89) return Support::no("cuDNN's FP8 matmul needs sm_89+");
  return Support::yes();
}

Support CudnnGemmBackend::implements(const GemmCase& problem) const {
  const GemmProblem& p = problem.problem();
  if (p.variant != GemmVariant::bmm_fp8) return Support::no("kbench's cuDNN GEMM is bmm_fp8's FP8 matmul only");
  if (const auto why = backends::cudnn_fp8_matmul_unsupported(matmul_shape(p))) return Support::no(*why);
  return Support::yes();
}

std::unique_ptr<Operation> CudnnGemmBackend::bind(GemmCase& problem, cudaStream_t stream) const {
  return std::make_unique<CudnnGemmOperation>(problem, stream);
}

}  // namespace kbench
