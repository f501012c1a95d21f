// One BatchMLAPagedAttentionWrapper problem (MLA decode, mla.md): the paged latent cache (ckv) and
// rope-key cache (kpe) on the device, the queries' two halves, the fp32 reference, the formulas.
// Its backends (flashinfer_backends) reach the tensors through params() and tables().
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/attention/mla/mla.hpp"
#include "routines/attention/paged_kv_layout.hpp"

namespace kbench {

struct MlaProblem {
  int batch = 0;
  int s_qo = 1;  // query tokens per request, causal among themselves (multi-token prediction)
  int num_heads = 0;
  int head_dim_ckv = 512;
  int head_dim_kpe = 64;
  int page_size = 0;
  int max_len = 0;  // --s_kv
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;  // --q_dtype, bfloat16 for fp8 queries
  std::vector<int32_t> qo_indptr;  // [batch + 1]: b * s_qo
  PagedKvLayout pages;  // KV lengths (at least s_qo) and page tables, made from --random_seed

  [[nodiscard]] int64_t query_rows() const { return static_cast<int64_t>(batch) * s_qo; }
  [[nodiscard]] std::size_t q_nope_elements() const {
    return static_cast<std::size_t>(query_rows()) * num_heads * head_dim_ckv;
  }
  [[nodiscard]] std::size_t q_pe_elements() const {
    return static_cast<std::size_t>(query_rows()) * num_heads * head_dim_kpe;
  }
  [[nodiscard]] std::size_t out_elements() const { return q_nope_elements(); }
  [[nodiscard]] std::size_t cache_tokens() const { return static_cast<std::size_t>(pages.total_pages) * page_size; }
};

// The device tables every input set shares.
struct MlaTables {
  const int32_t* qo_indptr = nullptr;    // [batch + 1]: i * s_qo
  const int32_t* kv_indptr = nullptr;    // [batch + 1] page offsets
  const int32_t* kv_indices = nullptr;   // the pages each request uses, in order
  const int32_t* kv_len = nullptr;       // [batch] tokens
  const int32_t* block_table = nullptr;  // [batch][pages_per_request]
};

class MlaCase final : public Case {
 public:
  static constexpr int kNoCopy = -1;

  explicit MlaCase(MlaProblem problem);

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

  [[nodiscard]] const MlaProblem& problem() const noexcept { return p_; }
  // The reference's rule: 1 / sqrt(128 + 64), DeepSeek's head dim before the absorption, whatever
  // --head_dim_ckv and --head_dim_kpe are.
  [[nodiscard]] static float sm_scale();
  // Input set `copy` in kbench's kernel parameters; kNoCopy: sizes, dtypes and scales alone.
  [[nodiscard]] kernels::MlaParams params(int copy) const;
  // Where input set `copy` writes its output (out_dtype, [batch * s_qo][num_heads][head_dim_ckv]).
  [[nodiscard]] void* out(int copy) const;
  [[nodiscard]] MlaTables tables() const;

 private:
  struct Copy {
    DeviceBuffer q_nope;
    DeviceBuffer q_pe;
    DeviceBuffer ckv;
    DeviceBuffer kpe;
    DeviceBuffer out;
  };

  MlaProblem p_;
  float q_scale_ = 1.0f;
  float kv_scale_ = 1.0f;  // ckv and kpe alike
  std::vector<Copy> copies_;
  DeviceBuffer qo_indptr_;
  DeviceBuffer kv_indptr_;
  DeviceBuffer kv_indices_;
  DeviceBuffer kv_len_;
  DeviceBuffer block_table_;
};

}  // namespace kbench
