// RMSNorm instantiations with the SiLU epilogue (fused_rmsnorm_silu): input bfloat16 -> output bfloat16
// (register path with 1, 4 or 8 vectors per thread; vector and scalar loop paths; no fused add).
#include "kernels/norm/rmsnorm_kernel.cuh"

namespace kbench::kernels::rmsnorm_detail {

cudaError_t launch_bf16_bf16_silu(const Args& args, const Plan& plan, bool fused, bool pdl, cudaStream_t stream) {
  return launch_typed<__nv_bfloat16, __nv_bfloat16, true>(args, plan, fused, pdl, stream);
}

}  // namespace kbench::kernels::rmsnorm_detail
