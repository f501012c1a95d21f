// RMSNorm instantiations with the SiLU epilogue (fused_rmsnorm_silu): input float16 -> output float16
// (register path with 1, 4 or 8 vectors per thread; vector and scalar loop paths; no fused add).
#include "kernels/norm/rmsnorm_kernel.cuh"

namespace kbench::kernels::rmsnorm_detail {

cudaError_t launch_fp16_fp16_silu(const Args& args, const Plan& plan, bool fused, bool pdl, cudaStream_t stream) {
  return launch_typed<__half, __half, true>(args, plan, fused, pdl, stream);
}

}  // namespace kbench::kernels::rmsnorm_detail
