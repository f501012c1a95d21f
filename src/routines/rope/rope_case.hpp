// One RoPE problem (apply_rope, apply_rope_pos_ids, apply_llama31_rope, apply_llama31_rope_pos_ids,
// apply_rope_with_cos_sin_cache): its tensors on the device, the formulas, the host reference, the
// call. RopeProblem also describes the FP8 routines (rope_quantize_case.hpp has their case).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/rope/rope.hpp"
#include "routines/rope/rope_reference.hpp"

namespace kbench {

enum class RopeVariant {
  rope,
  rope_pos_ids,
  llama31_rope,
  llama31_rope_pos_ids,
  cos_sin_cache,
  // FP8 outputs (RopeQuantizeCase)
  rope_quantize_fp8,
  mla_rope_quantize_fp8,
  rope_quantize_fp8_append_paged_kv_cache,
};

[[nodiscard]] constexpr bool is_quantized(RopeVariant v) {
  return v == RopeVariant::rope_quantize_fp8 || v == RopeVariant::mla_rope_quantize_fp8 ||
         v == RopeVariant::rope_quantize_fp8_append_paged_kv_cache;
}

struct RopeProblem {
  RopeVariant variant = RopeVariant::rope;
  int64_t batch_size = 1;
  int64_t seq_len = 1;  // every request: seq_len tokens at positions 0 .. seq_len - 1
  int q_heads = 1;
  int k_heads = 1;
  int head_dim = 128;
  int rotary_dim = 128;  // FP8 routines: the rope dim r of q_rope / k_rope
  DType dtype = DType::float16;
  bool interleave = false;
  // FP8 routines: the unrotated dims (q_nope / k_nope; paged append: head_dim - rotary_dim), the
  // output format and the scales (the reference leaves both at 1), PDL.
  int no_rope_dim = 0;
  DType quant_dtype = DType::fp8_e4m3;
  double quant_scale_q = 1.0;
  double quant_scale_kv = 1.0;
  bool enable_pdl = false;
  // Paged append: tokens per page, HND (else NHD).
  int page_size = 16;
  bool hnd = false;
  rope_reference::Frequencies frequencies;
  std::vector<std::string> ignored_flags;  // given, meaningless for this routine: warned about

  [[nodiscard]] int64_t tokens() const { return batch_size * seq_len; }
  // Paged append: each request owns ceil(seq_len / page_size) pages, contiguous.
  [[nodiscard]] int64_t pages_per_request() const { return (seq_len + page_size - 1) / page_size; }
  [[nodiscard]] int64_t pages() const { return batch_size * pages_per_request(); }
  [[nodiscard]] kernels::RopePositions position_source() const;
  // Each token's position: its index in its request.
  [[nodiscard]] std::vector<int64_t> positions() const;
  // The kernel's sizes and options (no pointers).
  [[nodiscard]] kernels::RopeParams shape() const;
};

// The reference's byte formula (shared/spec/rope.md); the cos/sin cache counted as the fp32 table
// kbench builds. The reference prints no FLOPs (0).
[[nodiscard]] double rope_bytes(const RopeProblem& p);

class RopeCase final : public Case {
 public:
  explicit RopeCase(RopeProblem problem) : p_(std::move(problem)) {}

  [[nodiscard]] double flops() const override { return 0.0; }
  [[nodiscard]] double bytes() const override { return rope_bytes(p_); }
  [[nodiscard]] std::size_t bytes_per_copy() const override;
  [[nodiscard]] std::size_t reference_bytes() const override { return 0; }  // the reference runs on the host
  [[nodiscard]] std::vector<TensorInfo> tensors() const override;
  void describe(const Log& log) const override;
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override;
  [[nodiscard]] std::vector<CheckedOutput> outputs() const override;
  [[nodiscard]] std::vector<std::vector<float>> reference(cudaStream_t stream) override;

  [[nodiscard]] const RopeProblem& problem() const noexcept { return p_; }
  // Input set `copy` as kbench's kernel takes it.
  [[nodiscard]] kernels::RopeParams params(int copy) const;

 private:
  struct Copy {
    DeviceBuffer q;
    DeviceBuffer k;
    DeviceBuffer q_out;
    DeviceBuffer k_out;
    DeviceBuffer indptr;     // request_offsets
    DeviceBuffer offsets;    // request_offsets
    DeviceBuffer pos_ids;    // pos_ids
    DeviceBuffer positions;  // positions_i64
    DeviceBuffer cache;      // cos_sin_cache
  };

  [[nodiscard]] std::size_t q_elements() const;
  [[nodiscard]] std::size_t k_elements() const;

  RopeProblem p_;
  std::vector<Copy> copies_;
};

}  // namespace kbench
