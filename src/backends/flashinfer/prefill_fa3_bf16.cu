// FlashInfer's fa3 (sm90) batch prefill, ragged and paged, bf16 Q/KV/O (see prefill_fa3.cuh).
#include "backends/flashinfer/prefill_fa3.cuh"

namespace kbench::backends::flashinfer::detail {
std::unique_ptr<PrefillImpl> make_prefill_fa3_bf16(const PrefillShape& shape, cudaStream_t stream) {
  return kbench_fi::make_prefill_fa3<nv_bfloat16>(shape, stream);
}
}  // namespace kbench::backends::flashinfer::detail
