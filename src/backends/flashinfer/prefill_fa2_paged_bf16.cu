// FlashInfer's fa2 batch prefill, paged KV, bf16 Q/KV/O (see prefill_fa2.cuh for the instantiations).
#include "backends/flashinfer/prefill_fa2.cuh"

namespace kbench::backends::flashinfer::detail {
std::unique_ptr<PrefillImpl> make_prefill_fa2_paged_bf16(const PrefillShape& shape, cudaStream_t stream) {
  return kbench_fi::make_prefill_fa2<__nv_bfloat16, /*PAGED=*/true>(shape, stream);
}
}  // namespace kbench::backends::flashinfer::detail
