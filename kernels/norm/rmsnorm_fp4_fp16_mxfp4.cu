// Fused RMSNorm + FP4 instantiations: input float16 -> MXFP4 (with and without the residual add;
// 1, 4 or 8 vectors per thread).
#include "kernels/norm/rmsnorm_fp4_kernel.cuh"

namespace kbench::kernels::rmsnorm_detail {

cudaError_t launch_fp4_fp16_mxfp4(const Fp4Args& args, const Plan& plan, bool fused, bool pdl, cudaStream_t stream) {
  return launch_fp4_typed<__half, quant::BlockFormat::mxfp4>(args, plan, fused, pdl, stream);
}

}  // namespace kbench::kernels::rmsnorm_detail
