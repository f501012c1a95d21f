// kbench's decode-attention kernels on a paged KV cache: host-side API. Knows nothing of the
// harness. One query token per request (BatchDecodeWithPagedKVCacheWrapper).
//
// For request b, query head h (kv head h / group, group = num_qo_heads / num_kv_heads):
//   s_t   = sm_scale * q_scale * k_scale * dot(q[b][h], K[b][t][h/group])   for t < len_b
//   p     = softmax(s)
//   o     = v_scale * sum_t p_t V[b][t][h/group]
//   out   = o converted to out_dtype (fp8: o / out_scale, round-to-nearest-even, saturated)
// len_b = (indptr[b+1] - indptr[b] - 1) * page_size + last_page_len[b]; the t-th token of b sits
// in page indices[indptr[b] + t / page_size], slot t % page_size. A request of length 0 writes
// zeros.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kbench/dtype.hpp"
#include "kernels/attention/kv_layout.hpp"

namespace kbench::kernels {

struct PagedKvCache {
  const void* data = nullptr;  // [num_pages][2][...] as the layout says, contiguous
  DType dtype = DType::bfloat16;  // bfloat16, float16, fp8_e4m3, fp8_e5m2
  KvLayout layout = KvLayout::NHD;
  int page_size = 16;
  int num_kv_heads = 0;
  int head_dim = 128;             // 64, 128 or 256
  const int32_t* indptr = nullptr;         // [batch + 1], device
  const int32_t* indices = nullptr;        // [indptr[batch]], device
  const int32_t* last_page_len = nullptr;  // [batch], device; 1..page_size (0 only for empty)
  float k_scale = 1.0f;  // dequantisation multipliers (fp8); 1 otherwise
  float v_scale = 1.0f;
  // K and V as two token-major tensors ([token][kv_head][head_dim] each: a prefill's ragged K/V) read
  // as pages of one token: `data` is K's base, v_data V's; page_size 1, layout NHD, indices name
  // tokens. nullptr: V sits in each page beside K. Only fa2_tc takes it.
  const void* v_data = nullptr;
};

struct DecodeParams {
  const void* q = nullptr;  // [batch][num_qo_heads][head_dim], contiguous
  DType q_dtype = DType::bfloat16;  // bfloat16, float16, fp8_e4m3, fp8_e5m2
  float q_scale = 1.0f;             // dequantisation multiplier of q (fp8)
  void* out = nullptr;      // [batch][num_qo_heads][head_dim], contiguous
  DType out_dtype = DType::bfloat16;  // bfloat16, float16, fp8_e4m3, fp8_e5m2
  float out_scale = 1.0f;             // fp8 out = o / out_scale
  PagedKvCache kv;
  int batch = 0;
  int num_qo_heads = 0;
  float sm_scale = 0.0f;  // usually 1 / sqrt(head_dim)
  bool enable_pdl = false;
};

// The split-KV schedule, made on the host before timing (FlashInfer's plan()). A work item is one
// (request, kv head, token range); it computes all `group` query heads of that kv head. An item
// with partial_slot < 0 writes the final output; otherwise it writes its normalised partial output
// and log-sum-exp to the workspace slot, and the merge step combines the slots of each
// (request, kv head) listed by merge_indptr.
struct DecodeWorkItem {
  int32_t request = 0;
  int32_t kv_head = 0;
  int32_t token_begin = 0;  // within the request: [token_begin, token_end)
  int32_t token_end = 0;
  int32_t partial_slot = -1;
};

struct DecodePlan {
  std::vector<DecodeWorkItem> items;
  // [batch * num_kv_heads + 1]: partial slots [merge_indptr[i], merge_indptr[i+1]) of
  // (request, kv head) i = request * num_kv_heads + kv_head; empty when nothing is split.
  std::vector<int32_t> merge_indptr;
  int num_partial_slots = 0;
  int max_pair_slots = 0;  // the most partial slots of one (request, kv head) pair
  // Workspace layout: partial_o float [slots][group][head_dim], then partial_lse float [slots][group].
  [[nodiscard]] std::size_t workspace_bytes(int group, int head_dim) const {
    return static_cast<std::size_t>(num_partial_slots) * group * (head_dim + 1) * sizeof(float);
  }
};

enum class DecodeKernel { fa2, fa2_tc };

// Plans the split for `kernel` from the host copy of the page table (indptr, last_page_len) and the
// GPU's SM count: requests are split into chunks when batch x kv heads alone cannot fill the GPU,
// or fill it in a ragged last wave (the KV dtype sets the bytes per token and the CTAs per SM).
[[nodiscard]] DecodePlan plan_decode(DecodeKernel kernel, const std::vector<int32_t>& indptr,
                                     const std::vector<int32_t>& last_page_len, int page_size, int num_qo_heads,
                                     int num_kv_heads, int head_dim, int sm_count,
                                     DType kv_dtype = DType::bfloat16);

// Device copies of a plan (caller-owned memory): items [plan.items.size()], merge_indptr
// [plan.merge_indptr.size()] (null when empty), workspace [plan.workspace_bytes(...)] bytes.
struct DecodeWorkspace {
  const DecodeWorkItem* items = nullptr;
  int num_items = 0;
  const int32_t* merge_indptr = nullptr;
  void* workspace = nullptr;
  int max_pair_slots = 0;  // the plan's (it picks the merge's block shape; 0: taken as many)
};

// cudaErrorInvalidValue for unsupported dtypes/shapes (checked first, so callers can use this to
// decide support), else the launch status. No allocation, no host synchronisation: capturable.
[[nodiscard]] cudaError_t launch_decode(DecodeKernel kernel, const DecodeParams& params,
                                        const DecodeWorkspace& workspace, cudaStream_t stream);

// Whether `kernel` supports these dtypes/shapes (the same checks launch_decode makes first).
[[nodiscard]] bool decode_supported(DecodeKernel kernel, const DecodeParams& params);

// The fp32 reference: one block per (request, query head), plain loops, double accumulation of
// the softmax sums. Writes o (before conversion to out_dtype, i.e. not divided by out_scale) to
// out_fp32 [batch][num_qo_heads][head_dim].
[[nodiscard]] cudaError_t launch_decode_reference(const DecodeParams& params, float* out_fp32, cudaStream_t stream);

// cudaSuccess when the kernels have machine code for the current device.
[[nodiscard]] cudaError_t decode_kernels_available();

}  // namespace kbench::kernels
