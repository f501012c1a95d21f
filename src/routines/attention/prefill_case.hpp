// One BatchPrefillWith{Ragged,Paged}KVCacheWrapper problem: the query rows and the KV (ragged tensors
// or a paged cache) on the device, the fp32 reference, and the formulas. Its backends
// (kbench_backends, cudnn_backends, flashinfer_backends) reach the tensors through params() and
// block_table().
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/attention/prefill/prefill.hpp"
#include "routines/attention/paged_kv_layout.hpp"

namespace kbench {

struct PrefillProblem {
  bool paged = false;  // BatchPrefillWithPagedKVCacheWrapper
  int batch = 0;
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim_qk = 0;
  int head_dim_vo = 0;
  int s_qo = 0;  // the largest q length
  int s_kv = 0;  // the largest kv length
  int page_size = 0;                                  // paged only
  kernels::KvLayout layout = kernels::KvLayout::NHD;  // paged only
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  bool causal = false;
  bool enable_pdl = false;
  PrefillLengths lens;                  // made from --random_seed
  std::vector<int32_t> qo_indptr;       // [batch + 1] token offsets
  std::vector<int32_t> kv_token_indptr;  // [batch + 1] token offsets (ragged K/V rows; cuDNN's offsets)
  PagedKvLayout pages;                  // paged only: page tables

  [[nodiscard]] int group() const { return num_qo_heads / num_kv_heads; }
  // Every request has one query token (q lengths are at least 1): a decode-shaped case.
  [[nodiscard]] bool one_query_token_each() const { return qo_indptr.back() == batch; }
  [[nodiscard]] std::size_t q_elements() const {
    return static_cast<std::size_t>(qo_indptr.back()) * num_qo_heads * head_dim_qk;
  }
  [[nodiscard]] std::size_t out_elements() const {
    return static_cast<std::size_t>(qo_indptr.back()) * num_qo_heads * head_dim_vo;
  }
  // Ragged: K and V rows; paged: the whole cache (every page of every request, K and V).
  [[nodiscard]] std::size_t k_elements() const {
    return paged ? static_cast<std::size_t>(pages.total_pages) * 2 * num_kv_heads * page_size * head_dim_qk
                 : static_cast<std::size_t>(kv_token_indptr.back()) * num_kv_heads * head_dim_qk;
  }
  [[nodiscard]] std::size_t v_elements() const {
    return paged ? 0 : static_cast<std::size_t>(kv_token_indptr.back()) * num_kv_heads * head_dim_vo;
  }
};

class PrefillCase final : public Case {
 public:
  static constexpr int kNoCopy = -1;

  explicit PrefillCase(PrefillProblem problem);

  [[nodiscard]] double flops() const override;
  [[nodiscard]] double bytes() const override;
  [[nodiscard]] std::size_t bytes_per_copy() const override;
  [[nodiscard]] std::size_t reference_bytes() const override;
  [[nodiscard]] std::vector<TensorInfo> tensors() const override;
  void describe(const Log& log) const override;
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> result_columns() const override;
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override;
  [[nodiscard]] std::vector<CheckedOutput> outputs() const override;
  [[nodiscard]] std::vector<std::vector<float>> reference(cudaStream_t stream) override;

  [[nodiscard]] const PrefillProblem& problem() const noexcept { return p_; }
  [[nodiscard]] float sm_scale() const;
  // Input set `copy` in kbench's kernel parameters (q, K/V or the paged cache, out, index tables,
  // scales); kNoCopy: the sizes, dtypes and scales alone, for can_implement.
  [[nodiscard]] kernels::PrefillParams params(int copy) const;
  // cuDNN's dense page table [batch][pages_per_request] (paged only).
  [[nodiscard]] const int32_t* block_table() const { return block_table_.as<int32_t>(); }

 private:
  struct Copy {
    DeviceBuffer q;
    DeviceBuffer k;  // ragged K, or the paged cache (K and V)
    DeviceBuffer v;  // ragged V (empty when paged)
    DeviceBuffer out;
  };

  PrefillProblem p_;
  float q_scale_ = 1.0f;
  float kv_scale_ = 1.0f;
  std::vector<Copy> copies_;
  DeviceBuffer qo_indptr_;
  DeviceBuffer kv_indptr_;  // ragged: token offsets; paged: page offsets
  DeviceBuffer kv_indices_;
  DeviceBuffer last_page_len_;
  DeviceBuffer block_table_;
};

}  // namespace kbench
