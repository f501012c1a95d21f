// FlashInfer's CUDA-core paged decode, float16 Q/KV/O.
#include "backends/flashinfer/decode_cuda_cores.cuh"

namespace kbench::backends::flashinfer::detail {
std::unique_ptr<DecodeImpl> make_decode_cuda_cores_fp16(const DecodeShape& shape, cudaStream_t stream) {
  return kbench_fi::make_decode_cuda_cores<__half>(shape, stream);
}
}  // namespace kbench::backends::flashinfer::detail
