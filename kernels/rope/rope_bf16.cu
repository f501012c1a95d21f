// The RoPE kernel for bfloat16 q and k, and the kernel-image probe (both dtypes are built alike).
#include "kernels/rope/rope_kernel.cuh"

namespace kbench::kernels::rope_detail {

cudaError_t launch_bf16(const RopeParams& p, cudaStream_t stream) { return launch_typed<__nv_bfloat16>(p, stream); }

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, rope_kernel<__nv_bfloat16>);
}

}  // namespace kbench::kernels::rope_detail
