// One BatchDecodeWithPagedKVCacheWrapper problem: the paged cache on the device, the plans of the
// split-KV kernels, the cuDNN graph, the fp32 reference, and the formulas.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/attention/decode/decode.hpp"
#include "routines/attention/paged_kv_layout.hpp"

namespace kbench {

namespace backends {
class CudnnPagedDecode;
struct CudnnPagedDecodeShape;
}

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

class DecodeCase final : public Case {
 public:
  explicit DecodeCase(DecodeProblem problem);
  ~DecodeCase() override;

  [[nodiscard]] double flops() const override;
  [[nodiscard]] double bytes() const override;
  [[nodiscard]] std::size_t bytes_per_copy() const override;
  [[nodiscard]] std::size_t reference_bytes() const override;
  [[nodiscard]] std::vector<TensorInfo> tensors() const override;
  void describe(const Log& log) const override;
  [[nodiscard]] BackendSupport support(std::string_view backend) const override;
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> result_columns() const override;
  [[nodiscard]] std::string resolved_backend(std::string_view backend) const override;
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override;
  void prepare(std::string_view backend, cudaStream_t stream) override;
  void launch(std::string_view backend, cudaStream_t stream, int copy) override;
  [[nodiscard]] RefcheckResult check(std::string_view backend, cudaStream_t stream) override;

 private:
  struct Copy {
    DeviceBuffer q;
    DeviceBuffer cache;
    DeviceBuffer out;
  };
  struct KernelPlan {  // one split-KV kernel's plan, on the device
    DeviceBuffer items;
    DeviceBuffer merge_indptr;
    DeviceBuffer workspace;
    kernels::DecodeWorkspace view;
  };
  [[nodiscard]] kernels::DecodeParams params(const Copy& copy) const;
  [[nodiscard]] std::optional<kernels::DecodeKernel> kernel_of(std::string_view backend) const;
  [[nodiscard]] backends::CudnnPagedDecodeShape cudnn_shape() const;

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
  std::optional<KernelPlan> fa2_plan_;
  std::optional<KernelPlan> fa2_tc_plan_;
  std::unique_ptr<backends::CudnnPagedDecode> cudnn_;
};

}  // namespace kbench
