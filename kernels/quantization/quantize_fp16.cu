// Block quantization instantiations for float16 input: NVFP4 (16, 32; launch-wide and per-token g),
// MXFP4, MXFP8, row amax.
#include "kernels/quantization/quantize_kernel.cuh"

namespace kbench::kernels::quantize_detail {

cudaError_t launch_fp16(const QuantizeParams& p, int sm_count, cudaStream_t stream) {
  return launch_typed<__half>(p, sm_count, stream);
}

}  // namespace kbench::kernels::quantize_detail
