// CUDA-core decode kernel instantiations for a bfloat16 KV cache: head_dim {64, 128, 256} x
// {1, 2, 4, 8} query heads per CTA (q and output dtypes are runtime arguments).
#include "kernels/attention/decode/decode_fa2.cuh"

namespace kbench::kernels::decode_detail::fa2 {

cudaError_t launch_fa2_bf16(const Fa2Args& args, int num_items, int head_dim, bool pdl, cudaStream_t stream) {
  return launch_fa2_kv<kBf16>(args, num_items, head_dim, pdl, stream);
}

cudaError_t probe_fa2_bf16(cudaFuncAttributes* attributes) {
  return cudaFuncGetAttributes(attributes, fa2_decode_kernel<128, 8, kBf16>);
}

}  // namespace kbench::kernels::decode_detail::fa2
