// The RoPE kernel for float16 q and k.
#include "kernels/rope/rope_kernel.cuh"

namespace kbench::kernels::rope_detail {

cudaError_t launch_fp16(const RopeParams& p, cudaStream_t stream) { return launch_typed<__half>(p, stream); }

}  // namespace kbench::kernels::rope_detail
