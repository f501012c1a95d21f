// kbench's prefill-attention kernels (ragged or paged KV): host-side API. Knows nothing of the
// harness. Several query tokens per request (BatchPrefillWith{Ragged,Paged}KVCacheWrapper).
//
// Request b has q_len_b query tokens (rows qo_indptr[b] .. qo_indptr[b+1] of q and out) and
// kv_len_b KV tokens. For query i < q_len_b, query head h, kv head h / group
// (group = num_qo_heads / num_kv_heads):
//   s_j  = sm_scale * q_scale * k_scale * dot(q[i][h], K[j][h/group])      for every kv j < kv_len_b,
//          causal: only j <= i + kv_len_b - q_len_b (bottom-right aligned)
//   o    = v_scale * sum_j softmax(s)_j V[j][h/group]
//   out  = o converted to out_dtype
// A query row that attends no key (kv_len_b = 0, or causal with i + kv_len_b - q_len_b < 0)
// writes zeros.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kbench/dtype.hpp"
#include "kernels/attention/kv_layout.hpp"

namespace kbench::kernels {

// Ragged KV: every request's tokens back to back. kv_len_b = indptr[b+1] - indptr[b].
struct RaggedKvView {
  const void* k = nullptr;  // [indptr[batch]][num_kv_heads][head_dim_qk], contiguous
  const void* v = nullptr;  // [indptr[batch]][num_kv_heads][head_dim_vo], contiguous
  const int32_t* indptr = nullptr;  // [batch + 1], device, token offsets
};

// Paged KV (head_dim_qk == head_dim_vo): the t-th token of request b sits in page
// indices[indptr[b] + t / page_size], slot t % page_size;
// kv_len_b = (indptr[b+1] - indptr[b] - 1) * page_size + last_page_len[b] (0 when no pages).
struct PagedKvView {
  const void* data = nullptr;  // [num_pages][2][...] as `layout` says, contiguous
  KvLayout layout = KvLayout::NHD;
  int page_size = 16;
  const int32_t* indptr = nullptr;         // [batch + 1], device, page offsets
  const int32_t* indices = nullptr;        // [indptr[batch]], device
  const int32_t* last_page_len = nullptr;  // [batch], device
};

struct PrefillParams {
  const void* q = nullptr;          // [qo_indptr[batch]][num_qo_heads][head_dim_qk], contiguous
  DType q_dtype = DType::bfloat16;  // bfloat16, float16, fp8_e4m3 (fa3)
  float q_scale = 1.0f;             // dequantisation multiplier (fp8); 1 otherwise
  const int32_t* qo_indptr = nullptr;  // [batch + 1], device, token offsets
  void* out = nullptr;              // [qo_indptr[batch]][num_qo_heads][head_dim_vo], contiguous
  DType out_dtype = DType::bfloat16;  // bfloat16 or float16
  bool paged = false;               // which of `ragged` and `pages` holds the KV
  RaggedKvView ragged;
  PagedKvView pages;
  DType kv_dtype = DType::bfloat16;  // K and V: bfloat16, float16, fp8_e4m3 (fa3)
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  int batch = 0;
  int num_qo_heads = 0;
  int num_kv_heads = 0;  // divides num_qo_heads
  int head_dim_qk = 128;
  int head_dim_vo = 128;
  bool causal = false;
  float sm_scale = 0.0f;  // usually 1 / sqrt(head_dim_qk)
  bool enable_pdl = false;
};

// One CTA's share of the work: rows [q_begin, q_end) (within the request, q_end - q_begin <= the
// kernel's block_m) of one query head of one request, with the request's rows resolved by the plan:
// fa3's persistent CTAs place an item from it alone (no dependent global loads between items) and
// copy it into shared memory with one bulk copy (16-byte aligned, 32 bytes).
struct alignas(16) PrefillWorkItem {
  int32_t request = 0;
  int32_t qo_head = 0;
  int32_t q_begin = 0;
  int32_t q_end = 0;
  int32_t q_row0 = 0;   // qo_indptr[request]
  int32_t q_len = 0;    // the request's query rows
  int32_t kv_row0 = 0;  // kv_indptr[request]: ragged, its first K/V row; paged, its first page-table entry
  int32_t kv_len = 0;   // the request's keys
};
static_assert(sizeof(PrefillWorkItem) == 32, "one 32-byte bulk copy per item");

enum class PrefillKernel {
  fa2,  // FlashAttention-2 style on mma.sync (sm_80+)
  fa3,  // FlashAttention-3 style on TMA + wgmma, warp-specialized (sm_90a)
};

// Rows of q one work item covers for `kernel` on these head dims and dtypes.
[[nodiscard]] int prefill_block_m(PrefillKernel kernel, const PrefillParams& params);

// The work list, made on the host before timing (FlashInfer's plan()) from host copies of the
// indptr arrays (and, paged, last_page_len) that the launches will read: ceil(q_len / block_m) items
// per (request, query head). The items that read the same keys and values (the tiles and query
// heads of one (request, kv head)) come together, so the CTAs running at once share them through the
// L2; the list is cut into rounds as wide as the CTAs that run at once on `sm_count` SMs, and each
// round is dealt out so that every CTA of a persistent grid (CTA i takes items i, i + grid, ...) ends
// with the same work. A plan is tied to those arrays: plan again when they change.
[[nodiscard]] std::vector<PrefillWorkItem> plan_prefill(PrefillKernel kernel, const PrefillParams& params,
                                                        const std::vector<int32_t>& qo_indptr,
                                                        const std::vector<int32_t>& kv_indptr,
                                                        const std::vector<int32_t>& last_page_len, int sm_count);

// Device copy of a plan (caller-owned memory).
struct PrefillWorkspace {
  const PrefillWorkItem* items = nullptr;
  int num_items = 0;
};

// Whether `kernel` takes these dtypes/shapes on the current device (the checks launch_prefill makes
// first).
[[nodiscard]] bool prefill_supported(PrefillKernel kernel, const PrefillParams& params);

// cudaErrorInvalidValue for what prefill_supported refuses, else the launch status. No allocation,
// no host synchronisation: capturable in a CUDA graph.
[[nodiscard]] cudaError_t launch_prefill(PrefillKernel kernel, const PrefillParams& params,
                                         const PrefillWorkspace& workspace, cudaStream_t stream);

// The fp32 reference (no plan needed): plain loops, double accumulation of the softmax sums. Writes
// o (before conversion to out_dtype) to out_fp32 [qo_indptr[batch]][num_qo_heads][head_dim_vo].
[[nodiscard]] cudaError_t launch_prefill_reference(const PrefillParams& params, float* out_fp32,
                                                   cudaStream_t stream);

// cudaSuccess when `kernel` has machine code for the current device.
[[nodiscard]] cudaError_t prefill_kernels_available(PrefillKernel kernel);

}  // namespace kbench::kernels
