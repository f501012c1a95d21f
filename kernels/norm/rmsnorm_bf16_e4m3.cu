// RMSNorm instantiations: input bfloat16 -> output fp8_e4m3 (fused add on/off; register path with 1, 4 or 8
// vectors per thread; vector and scalar loop paths).
#include "kernels/norm/rmsnorm_kernel.cuh"

namespace kbench::kernels::rmsnorm_detail {

cudaError_t launch_bf16_e4m3(const Args& args, const Plan& plan, bool fused, bool pdl, cudaStream_t stream) {
  return launch_typed<__nv_bfloat16, __nv_fp8_e4m3>(args, plan, fused, pdl, stream);
}

}  // namespace kbench::kernels::rmsnorm_detail
