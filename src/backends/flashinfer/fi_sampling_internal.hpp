// Internal to kbench_flashinfer: the interface between sampling_api.cu and the translation units
// that instantiate FlashInfer's sampling (sampling_float.cu) and top-k kernels (topk_<dtype>.cu).
// No FlashInfer header here. Every function enqueues on `stream` and returns the launch status.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace kbench::backends::flashinfer::detail {

// FlashInfer's radix row-state buffer (flashinfer.topk's cached 1 MB, zeroed once).
inline constexpr std::size_t kRowStateBytes = std::size_t{1} << 20;

// sampling_float.cu: flashinfer/sampling.cuh and air_top_p.cuh on float32 rows. `rng` is {seed,
// offset}; `valid` FlashInfer's per-row flag (rows bools).
[[nodiscard]] std::size_t softmax_workspace_bytes(int64_t rows, int64_t cols);
cudaError_t softmax(const float* logits, float* out, int64_t rows, int64_t cols, float temperature, void* workspace,
                    std::size_t workspace_bytes, bool enable_pdl, cudaStream_t stream);
cudaError_t sampling_from_probs(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols,
                                const uint64_t* rng, cudaStream_t stream);
cudaError_t sampling_from_logits(const float* logits, int32_t* out, int64_t rows, int64_t cols, const uint64_t* rng,
                                 cudaStream_t stream);
cudaError_t top_k_sampling(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols, int64_t k,
                           const uint64_t* rng, cudaStream_t stream);
cudaError_t top_p_sampling(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols, float top_p,
                           const uint64_t* rng, cudaStream_t stream);
cudaError_t min_p_sampling(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols, float min_p,
                           const uint64_t* rng, cudaStream_t stream);
cudaError_t top_k_top_p_joint(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols, int64_t k,
                              float top_p, const uint64_t* rng, cudaStream_t stream);
[[nodiscard]] std::size_t top_p_renorm_workspace_bytes(int64_t rows, int64_t cols);
cudaError_t top_p_renorm(const float* probs, float* out, int64_t rows, int64_t cols, float top_p, void* workspace,
                         cudaStream_t stream);
cudaError_t chain_speculative(const float* draft, const int32_t* draft_ids, const float* target, int32_t* out_ids,
                              int32_t* accepted, int32_t* emitted, int64_t rows, int64_t n, int64_t cols,
                              const uint64_t* rng, cudaStream_t stream);
// kbench's stand-ins for the torch ops of the Python API (sampling_float.cu):
cudaError_t renormalize_rows(const float* values, float* out, int64_t rows, int64_t k, cudaStream_t stream);
cudaError_t gather_ids(const int32_t* local, const int32_t* indices, int32_t* out, int64_t rows, int64_t k,
                       cudaStream_t stream);
cudaError_t widen_ids(const int32_t* in, int64_t* out, int64_t count, cudaStream_t stream);

// topk_<dtype>.cu: flashinfer/topk.cuh for one input dtype, with that dtype's stand-ins.
struct TopKKernels {
  // logits.float()
  cudaError_t (*to_float)(const void* in, float* out, int64_t count, cudaStream_t stream);
  // torch.softmax over the k values of each row, as float32 (the from_logits fast path)
  cudaError_t (*softmax_rows)(const void* values, float* out, int64_t rows, int64_t k, cudaStream_t stream);
  cudaError_t (*top_k)(const void* in, int32_t* indices, void* values, int64_t rows, int64_t cols, int64_t k,
                       void* row_states, bool sorted, bool deterministic, cudaStream_t stream);
  cudaError_t (*page_table)(const void* in, int32_t* out, const int32_t* page_table, const int32_t* lengths,
                            int64_t rows, int64_t cols, int64_t k, void* row_states, cudaStream_t stream);
  cudaError_t (*ragged)(const void* in, int32_t* out, const int32_t* offsets, const int32_t* lengths, int64_t rows,
                        int64_t cols, int64_t k, void* row_states, cudaStream_t stream);
  cudaError_t (*mask)(const void* in, void* out, int64_t rows, int64_t cols, int64_t k, void* row_states,
                      cudaStream_t stream);
  cudaError_t (*renorm)(const void* in, void* out, int64_t rows, int64_t cols, int64_t k, void* row_states,
                        cudaStream_t stream);
};
TopKKernels topk_f32();
TopKKernels topk_f16();
TopKKernels topk_bf16();

}  // namespace kbench::backends::flashinfer::detail
