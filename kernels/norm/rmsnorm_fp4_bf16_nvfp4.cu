// Fused RMSNorm + FP4 instantiations: input bfloat16 -> NVFP4 (with and without the residual add;
// 1, 4 or 8 vectors per thread).
#include "kernels/norm/rmsnorm_fp4_kernel.cuh"

namespace kbench::kernels::rmsnorm_detail {

cudaError_t launch_fp4_bf16_nvfp4(const Fp4Args& args, const Plan& plan, bool fused, bool pdl, cudaStream_t stream) {
  return launch_fp4_typed<__nv_bfloat16, quant::BlockFormat::nvfp4>(args, plan, fused, pdl, stream);
}

}  // namespace kbench::kernels::rmsnorm_detail
