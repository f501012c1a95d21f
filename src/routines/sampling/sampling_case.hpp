// One sampling-family problem: its tensors on the device, the reference's formulas, the refcheck
// (sampling_checks.hpp) and the kernels' parameters every backend starts from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/sampling/sampling.hpp"

namespace kbench {

enum class SamplingOp {
  softmax,
  sampling_from_probs,
  sampling_from_logits,
  top_k_sampling_from_probs,
  top_p_sampling_from_probs,
  top_k_top_p_sampling_from_probs,
  top_k_top_p_sampling_from_logits,
  min_p_sampling_from_probs,
  top_k_renorm_probs,
  top_p_renorm_probs,
  top_k_mask_logits,
  chain_speculative_sampling,
  top_k,
  top_k_page_table_transform,
  top_k_ragged_transform,
};

// What a routine draws one id per row from (the samplers), or computes.
[[nodiscard]] bool is_sampler(SamplingOp op);
[[nodiscard]] bool reads_logits(SamplingOp op);     // softmax, *_from_logits, top_k_mask_logits
[[nodiscard]] bool reads_probs(SamplingOp op);      // float32 probabilities whatever --input_dtype says
[[nodiscard]] bool is_transform(SamplingOp op);     // top_k_page_table_transform, top_k_ragged_transform
// The routines whose filters a sort-based baseline (backend cub) serves.
[[nodiscard]] bool filters_by_sorting(SamplingOp op);

using SamplingDistribution = kernels::sampling::Distribution;

struct SamplingProblem {
  SamplingOp op = SamplingOp::softmax;
  int64_t batch_size = 0;
  int64_t vocab_size = 0;  // the row length; the transforms' max_len
  int64_t num_rows = 0;    // the transforms' rows of scores (batch_size elsewhere)
  DType input_dtype = DType::float32;  // of the input tensor (float32 for the probabilities routines)
  int64_t top_k = 50;
  double top_p = 0.9;
  double min_p = 0.1;
  double temperature = 1.0;
  bool joint = false;  // --filter_apply_order joint
  int64_t num_speculate_tokens = 5;
  SamplingDistribution distribution = SamplingDistribution::flat;
  bool enable_pdl = false;
  std::vector<std::string> warnings;  // printed by describe()

  [[nodiscard]] int64_t rows() const { return is_transform(op) ? num_rows : batch_size; }
  [[nodiscard]] int64_t cols() const { return vocab_size; }
  [[nodiscard]] int64_t n() const { return num_speculate_tokens; }
  // The sampler's filters (as the kernels and the checks take them).
  [[nodiscard]] kernels::sampling::SamplerParams sampler_filters() const;
};

// The reference's byte count (sampling.md); TFLOPs are 0 for the whole family.
[[nodiscard]] double sampling_bytes(const SamplingProblem& p);

class SamplingCase final : public Case {
 public:
  static constexpr int kNoCopy = -1;
  explicit SamplingCase(SamplingProblem problem) : p_(std::move(problem)) {}

  [[nodiscard]] double flops() const override { return 0.0; }
  [[nodiscard]] double bytes() const override { return sampling_bytes(p_); }
  [[nodiscard]] std::size_t bytes_per_copy() const override;
  [[nodiscard]] std::size_t reference_bytes() const override { return 0; }  // the reference runs on the host
  [[nodiscard]] std::vector<TensorInfo> tensors() const override;
  void describe(const Log& log) const override;
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override;
  [[nodiscard]] std::vector<CheckedOutput> outputs() const override;
  [[nodiscard]] std::vector<std::vector<float>> reference(cudaStream_t stream) override;
  [[nodiscard]] std::vector<Comparison> compare(const std::vector<CheckedOutput>& outputs,
                                                const std::vector<std::vector<float>>& expected,
                                                const std::vector<std::vector<float>>& got) const override;

  [[nodiscard]] const SamplingProblem& problem() const noexcept { return p_; }
  // The Philox seed and offset every call reads (device {seed, offset}: --random_seed and 0, as the
  // reference passes them); set_rng changes them (the distribution tests draw with many offsets).
  [[nodiscard]] const uint64_t* rng() const { return rng_.as<const uint64_t>(); }
  void set_rng(uint64_t seed, uint64_t offset, cudaStream_t stream);
  // Input set 0's main input, for tests that write their own rows (rows() x cols() of input_dtype).
  [[nodiscard]] void* input(int copy) const;

  // Input set `copy` as each kernel family takes it; kNoCopy: sizes and values only (null pointers).
  [[nodiscard]] kernels::sampling::SamplerParams sampler_params(int copy) const;
  [[nodiscard]] kernels::sampling::FilterParams filter_params(int copy) const;
  [[nodiscard]] kernels::sampling::TopKParams top_k_params(int copy) const;
  [[nodiscard]] kernels::sampling::ChainParams chain_params(int copy) const;
  [[nodiscard]] kernels::sampling::SortBaselineParams sort_params(int copy) const;

 private:
  struct Copy {
    DeviceBuffer input;       // probabilities, logits or scores; chain: the draft probabilities
    DeviceBuffer draft_ids;   // chain
    DeviceBuffer target;      // chain
    DeviceBuffer page_table;  // top_k_page_table_transform
    DeviceBuffer output;      // softmax, renorms, mask: [rows][cols]; samplers: [rows]; chain: ids
    DeviceBuffer indices;     // top_k: int64 [rows][k]; transforms: int32 [rows][k]; chain: accepted, emitted
  };
  [[nodiscard]] const Copy& copy_at(int copy) const;
  [[nodiscard]] DType output_dtype() const;
  [[nodiscard]] int64_t output_count() const;

  SamplingProblem p_;
  std::vector<int32_t> lengths_;  // the transforms' (all max_len, as the reference)
  std::vector<int32_t> offsets_;  // top_k_ragged_transform's (r * max_len)
  DeviceBuffer lengths_device_;
  DeviceBuffer offsets_device_;
  DeviceBuffer rng_;
  std::vector<Copy> copies_;
};

}  // namespace kbench
