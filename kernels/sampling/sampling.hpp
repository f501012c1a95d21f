// kbench's sampling kernels: host-side launch API (plain parameter structs, cudaError_t launch
// functions). Knows nothing of the harness.
//
// Every row kernel keeps one row of the input resident in shared memory, split over a cluster of
// CTAs (1 to 16, by row length and batch), loaded once from HBM with 16-byte cp.async: whatever a
// routine computes from the row (max, masses, the k-th largest value, a top-p pivot, a draw) is a
// pass over shared memory, never a second read of HBM. Random numbers are Philox4x32-10 draws keyed
// by the seed and offset read from device memory at every call (rng[0] seed, rng[1] offset), so a
// CUDA graph replays with whatever the buffer holds, and the same seed and offset always give the
// same ids. See row_kernels.cuh for each kernel's design.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kbench/dtype.hpp"

namespace kbench::kernels::sampling {

// How a row kernel is launched: CTAs per row (a thread-block cluster), threads per CTA, elements of
// the row each CTA holds, dynamic shared memory per CTA. Made by the plan_* functions (host; they
// query the device once, outside any stream capture) and handed to the matching launch_*.
struct RowPlan {
  int cluster = 1;
  int threads = 512;
  int64_t slice = 0;
  int list_capacity = 0;  // entries of the top-k candidate list (0: the kernel needs none)
  int smem_bytes = 0;
  // The two-pass top_k and top-k samplers (chunks > 0; batches that fill the GPU): a CTA per row
  // sets the row's threshold from a sample (the sample_rank-th largest), a CTA per `slice`-element
  // chunk of a row writes the chunk's elements at or above it to the row's pool (pool_capacity
  // candidates), then a CTA per row (merge_smem_bytes of shared memory: list_capacity candidates)
  // selects or draws from them. The params' workspace holds workspace_bytes.
  int chunks = 0;
  int sample_rank = 0;
  int pool_capacity = 0;
  int merge_smem_bytes = 0;
  std::size_t workspace_bytes = 0;
};

// One draw per row from a filtered distribution. The input holds probabilities (float32) or logits
// (float32, float16, bfloat16: probabilities = softmax(logits), temperature not applied). Filters,
// all optional and combinable:
//   top_k in [1, vocab): the k largest (every value equal to the k-th stays in);
//   min_p > 0 (probabilities): values >= min_p * the row's largest;
//   top_p < 1: the smallest set of largest values whose mass reaches top_p times the reference mass:
//     the mass of what the other filters kept (top_k_first), or of the whole row (`joint`, as
//     FlashInfer's joint top-k/top-p kernel: a token passes both filters of the unrenormalised row).
struct SamplerParams {
  const void* input = nullptr;  // [rows][vocab], contiguous
  DType dtype = DType::float32;
  bool from_logits = false;
  int64_t rows = 0;
  int64_t vocab = 0;
  int64_t top_k = 0;      // 0: off
  float top_p = 1.0f;     // 1: off
  float min_p = 0.0f;     // 0: off
  bool joint = false;
  const uint64_t* rng = nullptr;  // device {seed, offset}
  int32_t* output = nullptr;      // [rows]
  void* workspace = nullptr;      // RowPlan::workspace_bytes, where the plan has chunks
};

// Row-wise maps of one input to one output of the same shape.
enum class FilterOp {
  softmax,       // out (float32) = softmax(x / temperature)
  top_k_mask,    // out (dtype) = x where x >= the k-th largest, else -inf
  top_k_renorm,  // out (dtype) = x / sum(kept) where x >= the k-th largest, else 0
  top_p_renorm,  // out (float32) = x / sum(kept) for the smallest top set of mass >= top_p, else 0
};
struct FilterParams {
  FilterOp op = FilterOp::softmax;
  const void* input = nullptr;  // [rows][cols], contiguous
  DType dtype = DType::float32;  // top_p_renorm: float32 only
  int64_t rows = 0;
  int64_t cols = 0;
  float temperature = 1.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
  void* output = nullptr;
  bool enable_pdl = false;  // softmax: programmatic dependent launch
};

// Exactly k of the largest values per row (all larger than the k-th, then as many equal to it as
// fit), unsorted, among the first lengths[r] entries of row r (all `cols` without lengths). Rows
// shorter than k give all their entries in order, then -1.
enum class TopKOutput {
  values_indices,  // values (dtype) and int64 indices
  page_table,      // int32 page_table[r * page_table_stride + index]
  ragged,          // int32 index + offsets[r]
};
struct TopKParams {
  TopKOutput output = TopKOutput::values_indices;
  const void* input = nullptr;  // [rows][cols], contiguous
  DType dtype = DType::float32;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t k = 0;
  const int32_t* lengths = nullptr;  // [rows] or nullptr
  void* values = nullptr;            // [rows][k], dtype (values_indices)
  int64_t* indices = nullptr;        // [rows][k] (values_indices)
  const int32_t* page_table = nullptr;
  int64_t page_table_stride = 0;
  const int32_t* offsets = nullptr;  // [rows] (ragged)
  int32_t* mapped = nullptr;         // [rows][k] (page_table, ragged)
  void* workspace = nullptr;         // RowPlan::workspace_bytes, where the plan has chunks
};

// Chain speculative sampling, per request r: draft token i (i < n) is accepted when
// u_i * draft[r,i,t_i] < target[r,i,t_i]; at the first rejection e a token is drawn from
// normalize(max(target[r,e] - draft[r,e], 0)), or, when all n are accepted, from target[r,n].
// output_ids[r] = t_0 .. t_{e-1}, the drawn token, then -1; emitted[r] = e; accepted[r] = the number
// of positions accepted, each tested independently (ignoring the stop).
struct ChainParams {
  const float* draft_probs = nullptr;     // [rows][n][vocab]
  const int32_t* draft_ids = nullptr;     // [rows][n]
  const float* target_probs = nullptr;    // [rows][n + 1][vocab]
  int64_t rows = 0;
  int64_t n = 0;
  int64_t vocab = 0;
  const uint64_t* rng = nullptr;
  int32_t* output_ids = nullptr;  // [rows][n + 1]
  int32_t* accepted = nullptr;    // [rows]
  int32_t* emitted = nullptr;     // [rows]
};

// cudaErrorInvalidValue: parameters the kernels do not take (dtypes, sizes); cudaErrorNotSupported:
// a row longer than 16 CTAs' shared memory holds, or no cluster of the size it needs fits.
[[nodiscard]] cudaError_t plan_sampler(const SamplerParams& params, RowPlan* plan);
[[nodiscard]] cudaError_t plan_filter(const FilterParams& params, RowPlan* plan);
[[nodiscard]] cudaError_t plan_top_k(const TopKParams& params, RowPlan* plan);
[[nodiscard]] cudaError_t plan_chain(const ChainParams& params, RowPlan* plan);

// Enqueue one call: no allocation, no synchronisation (CUDA-graph capturable).
[[nodiscard]] cudaError_t launch_sampler(const SamplerParams& params, const RowPlan& plan, cudaStream_t stream);
[[nodiscard]] cudaError_t launch_filter(const FilterParams& params, const RowPlan& plan, cudaStream_t stream);
[[nodiscard]] cudaError_t launch_top_k(const TopKParams& params, const RowPlan& plan, cudaStream_t stream);
[[nodiscard]] cudaError_t launch_chain(const ChainParams& params, const RowPlan& plan, cudaStream_t stream);

// cudaSuccess when the row kernels have machine code for the current device (they need sm_90:
// thread-block clusters); cudaErrorNoKernelImageForDevice otherwise.
[[nodiscard]] cudaError_t sampling_kernels_available();

// ---------------------------------------------------------------------------------------------
// The sort-based baseline (backend `cub`): what a framework without a dedicated kernel does. CUB's
// DeviceSegmentedSort sorts every row (values with their indices, descending), then one CTA per row
// walks the sorted row: block-wide prefix sums give the kept set (top-k, min-p, top-p) and a binary
// search of the draw's target in them the token; renorm, mask and top-k scatter or copy the kept
// entries. Same Philox draws as the row kernels.
enum class SortedOp {
  sample,        // one id per row, filters as SamplerParams
  top_k_mask,    // as FilterOp
  top_k_renorm,  // as FilterOp
  top_p_renorm,  // as FilterOp
  top_k,         // as TopKParams (all outputs)
};
struct SortBaselineParams {
  SortedOp op = SortedOp::sample;
  const void* input = nullptr;  // [rows][cols]
  DType dtype = DType::float32;
  bool from_logits = false;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  bool joint = false;
  const uint64_t* rng = nullptr;
  int32_t* samples = nullptr;  // sample
  void* output = nullptr;      // renorm, mask: [rows][cols]
  TopKParams top;              // top_k: outputs, lengths, page table, offsets (input, dtype, rows, cols, k ignored)
};
// Device workspace the baseline needs (sorted keys and indices, CUB's temporary storage, the
// segment offsets and the unsorted indices): allocate once, outside timing.
[[nodiscard]] cudaError_t sort_baseline_workspace(const SortBaselineParams& params, std::size_t* bytes);
// Fills the parts of the workspace that never change (offsets, indices 0..cols-1): once, after
// allocating it.
[[nodiscard]] cudaError_t prepare_sort_baseline(const SortBaselineParams& params, void* workspace, std::size_t bytes,
                                                cudaStream_t stream);
[[nodiscard]] cudaError_t launch_sort_baseline(const SortBaselineParams& params, void* workspace, std::size_t bytes,
                                               cudaStream_t stream);

// ---------------------------------------------------------------------------------------------
// Inputs, as the reference draws them ('flat') or as a language model's ('peaked'): see
// distributions.hpp for the laws. Deterministic in (seed, element).
enum class Distribution { flat, peaked };

// Probability rows summing to 1 (rounded to dtype after normalising in float32).
[[nodiscard]] cudaError_t fill_probabilities(void* out, DType dtype, int64_t rows, int64_t cols, uint64_t seed,
                                             Distribution distribution, cudaStream_t stream);
// Logits (also the scores of top_k and the transforms): flat = N(0, 1); peaked = the log of the
// peaked law's probabilities.
[[nodiscard]] cudaError_t fill_logits(void* out, DType dtype, int64_t rows, int64_t cols, uint64_t seed,
                                      Distribution distribution, cudaStream_t stream);
// Integers uniform in [0, bound).
[[nodiscard]] cudaError_t fill_uniform_ints(int32_t* out, int64_t count, int32_t bound, uint64_t seed,
                                            cudaStream_t stream);

}  // namespace kbench::kernels::sampling
