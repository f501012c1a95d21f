// RMSNorm instantiations: input bfloat16 -> output bfloat16 (fused add on/off; register path with 1, 4 or 8
// vectors per thread; vector and scalar loop paths).
#include "kernels/norm/rmsnorm_kernel.cuh"

namespace kbench::kernels::rmsnorm_detail {

cudaError_t launch_bf16_bf16(const Args& args, const Plan& plan, bool fused, bool pdl, cudaStream_t stream) {
  return launch_typed<__nv_bfloat16, __nv_bfloat16>(args, plan, fused, pdl, stream);
}

cudaError_t probe_bf16_bf16(cudaFuncAttributes* attributes) {
  return cudaFuncGetAttributes(attributes, rmsnorm_reg_kernel<__nv_bfloat16, __nv_bfloat16, false, 4>);
}

}  // namespace kbench::kernels::rmsnorm_detail
