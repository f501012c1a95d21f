// CUDA-core decode kernel instantiations for a float16 KV cache: head_dim {64, 128, 256} x
// {1, 2, 4, 8} query heads per CTA (q and output dtypes are runtime arguments).
#include "kernels/attention/decode/decode_fa2.cuh"

namespace kbench::kernels::decode_detail::fa2 {

cudaError_t launch_fa2_fp16(const Fa2Args& args, int num_items, int head_dim, bool pdl, cudaStream_t stream) {
  return launch_fa2_kv<kFp16>(args, num_items, head_dim, pdl, stream);
}

}  // namespace kbench::kernels::decode_detail::fa2
