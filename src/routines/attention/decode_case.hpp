// One BatchDecodeWithPagedKVCacheWrapper problem: the paged cache on the device, the fp32
// reference, and the formulas. Its backends (kbench_backends, cudnn_backends, flashinfer_backends)
// reach the tensors through params() and tables().
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/attention/decode/decode.hpp"
#include "routines/attention/paged_kv_layout.hpp"

namespace kbench {

struct DecodeProblem {
  int batch = 0;
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int page_size = 0;
  int max_len = 0;  // --s_kv
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  bool out_nvfp4 = false;  // --out_dtype nvfp4: accepted, runs on no kbench backend (Blackwell)
  kernels::KvLayout layout = kernels::KvLayout::NHD;
  bool enable_pdl = false;
  PagedKvLayout pages;  // lengths and page tables, made from --random_seed

  [[nodiscard]] int group() const { return num_qo_heads / num_kv_heads; }
  [[nodiscard]] std::size_t cache_elements() const {
    return static_cast<std::size_t>(pages.total_pages) * 2 * num_kv_heads * page_size * head_dim;
  }
  [[nodiscard]] std::size_t q_elements() const { return static_cast<std::size_t>(batch) * num_qo_heads * head_dim; }
};

// The device tables every input set shares: the page table in both forms (FlashInfer's CSR and
// cuDNN's dense block table) and the lengths.
struct DecodeTables {
  const int32_t* indptr = nullptr;
  const int32_t* indices = nullptr;
  const int32_t* last_page_len = nullptr;
  const int32_t* block_table = nullptr;  // [batch][pages_per_request]
  const int32_t* seq_len_kv = nullptr;   // [batch]
  const int32_t* seq_len_q = nullptr;    // [batch] of 1s
};

class DecodeCase final : public Case {
 public:
  static constexpr int kNoCopy = -1;

  explicit DecodeCase(DecodeProblem problem);

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

  [[nodiscard]] const DecodeProblem& problem() const noexcept { return p_; }
  [[nodiscard]] float sm_scale() const;
  // Input set `copy` in kbench's kernel parameters (q, cache, out, tables, scales); kNoCopy: the
  // sizes, dtypes and scales alone, for can_implement.
  [[nodiscard]] kernels::DecodeParams params(int copy) const;
  [[nodiscard]] DecodeTables tables() const;

 private:
  struct Copy {
    DeviceBuffer q;
    DeviceBuffer cache;
    DeviceBuffer out;
  };

  DecodeProblem p_;
  float q_scale_ = 1.0f;
  float kv_scale_ = 1.0f;
  std::vector<Copy> copies_;
  DeviceBuffer indptr_;
  DeviceBuffer indices_;
  DeviceBuffer last_page_len_;
  DeviceBuffer block_table_;
  DeviceBuffer seq_len_kv_;
  DeviceBuffer seq_len_q_;
};

}  // namespace kbench
