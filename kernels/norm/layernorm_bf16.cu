// LayerNorm + FP8 instantiations: input bfloat16 -> fp8_e4m3 and fp8_e5m2 (1, 4 or 8 vectors per thread).
#include "kernels/norm/layernorm_kernel.cuh"

namespace kbench::kernels::rmsnorm_detail {

cudaError_t launch_layernorm_bf16_e4m3(const LayerNormArgs& args, const Plan& plan, bool pdl, cudaStream_t stream) {
  return launch_layernorm_typed<__nv_bfloat16, __nv_fp8_e4m3>(args, plan, pdl, stream);
}

cudaError_t launch_layernorm_bf16_e5m2(const LayerNormArgs& args, const Plan& plan, bool pdl, cudaStream_t stream) {
  return launch_layernorm_typed<__nv_bfloat16, __nv_fp8_e5m2>(args, plan, pdl, stream);
}

}  // namespace kbench::kernels::rmsnorm_detail
