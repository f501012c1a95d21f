// The FP8 RoPE kernel for bfloat16 inputs (both fp8 formats), and its kernel-image probe.
#include "kernels/rope/rope_quantize_kernel.cuh"

namespace kbench::kernels::rope_detail {

cudaError_t launch_quantize_bf16(const RopeQuantizeParams& p, cudaStream_t stream) {
  return launch_quantize_typed<__nv_bfloat16>(p, stream);
}

cudaError_t probe_quantize_kernel_image() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, rope_quantize_kernel<__nv_bfloat16, __NV_E4M3>);
}

}  // namespace kbench::kernels::rope_detail
