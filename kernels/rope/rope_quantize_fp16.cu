// The FP8 RoPE kernel for float16 inputs (both fp8 formats).
#include "kernels/rope/rope_quantize_kernel.cuh"

namespace kbench::kernels::rope_detail {

cudaError_t launch_quantize_fp16(const RopeQuantizeParams& p, cudaStream_t stream) { return launch_quantize_typed<__half>(p, stream); }

}  // namespace kbench::kernels::rope_detail
