// Block quantization instantiations for float16 input: NVFP4 (16, 32), MXFP4, MXFP8, row amax.
#include "kernels/quantization/quantize_kernel.cuh"

namespace kbench::kernels::quantize_detail {

cudaError_t launch_fp16(const QuantizeParams& p, int sm_count, const Nvfp4Tuning& tuning, cudaStream_t stream) {
  return launch_typed<__half>(p, sm_count, tuning, stream);
}

}  // namespace kbench::kernels::quantize_detail
