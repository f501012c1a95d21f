// Block quantization instantiations for bfloat16 input: NVFP4 (16, 32; launch-wide and per-token g),
// MXFP4, MXFP8, row amax.
#include "kernels/quantization/quantize_kernel.cuh"

namespace kbench::kernels::quantize_detail {

cudaError_t launch_bf16(const QuantizeParams& p, int sm_count, cudaStream_t stream) {
  return launch_typed<__nv_bfloat16>(p, sm_count, stream);
}

// Whether this build has machine code for the current device (every kernel is built alike).
cudaError_t probe_kernel_image() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, quantize_kernel<__nv_bfloat16, BlockFormat::nvfp4, 16>);
}

}  // namespace kbench::kernels::quantize_detail
