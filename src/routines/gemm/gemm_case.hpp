// One GEMM problem of the reference's GEMM routines (bmm_fp8, gemm_fp8_nt_groupwise,
// group_gemm_fp8_nt_groupwise, mm_fp4, mm_fp8, mm_bf16, bmm_bf16): its operands on the device,
// built as the reference builds them, the formulas, the fp32 reference and the refcheck's rule.
//
// Every routine computes D = A B^T per batch with A [m][k] and B [n][k] both k-contiguous (the
// reference's "mat2" (k, n) column-major view is the same memory), D [m][n] row-major.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench {

enum class GemmVariant { bmm_fp8, gemm_fp8_nt_groupwise, group_gemm_fp8_nt_groupwise, mm_fp4, mm_fp8, mm_bf16, bmm_bf16 };

// The reference's only meaningful --tile_size (its GEMM calls fix the scale granularity at 1 x 128
// and 128 x 128).
inline constexpr int64_t kGemmTile = 128;

struct GemmProblem {
  GemmVariant variant = GemmVariant::mm_bf16;
  int64_t batch = 1;  // bmm_*: --batch_size; group GEMM: --group_size (groups of m rows); else 1
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t tile = kGemmTile;
  kernels::gemm::ScaleMajor major = kernels::gemm::ScaleMajor::mn;
  DType a_dtype = DType::bfloat16;  // storage of A and B (uint8: packed FP4 pairs)
  DType b_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  int mma_sm = 1;
  bool bias = false;  // mm_bf16: a bfloat16 [n] added to every row
  bool use_nvfp4 = false;
  bool use_128x4_sf_layout = false;
  bool enable_pdl = false;
  std::vector<std::string> ignored_flags;  // given, meaningless for this routine: warned about

  [[nodiscard]] bool groupwise() const {
    return variant == GemmVariant::gemm_fp8_nt_groupwise || variant == GemmVariant::group_gemm_fp8_nt_groupwise;
  }
  [[nodiscard]] bool per_tensor() const { return variant == GemmVariant::bmm_fp8 || variant == GemmVariant::mm_fp8; }
  [[nodiscard]] int64_t k_blocks() const { return k / tile; }
  // B's scale blocks along n: the last one partial where tile does not divide n (kbench's extension).
  [[nodiscard]] int64_t n_blocks() const { return kernels::gemm::scale_blocks(n, tile); }
  [[nodiscard]] int64_t a_elements() const { return batch * m * k; }
  [[nodiscard]] int64_t b_elements() const { return batch * n * k; }
  [[nodiscard]] int64_t out_elements() const { return batch * m * n; }
  // Groupwise: fp32 scales of all of A (one layout over every group's rows) and of all of B.
  [[nodiscard]] int64_t a_scale_count() const { return groupwise() ? batch * m * k_blocks() : 1; }
  [[nodiscard]] int64_t b_scale_count() const { return groupwise() ? batch * n_blocks() * k_blocks() : 1; }
  // mm_fp4: the block format (--use_nvfp4: NVFP4, else MXFP4), its block and the scale layouts the
  // reference quantizes with: NVFP4's A 128x4 with --use_128x4_sf_layout, else 8x4; MXFP4's A
  // 128x4 whatever the flag (the reference quantizes it so and only declares 8x4: its quirk,
  // gemm.md); B 128x4. Scale columns: k / block.
  [[nodiscard]] kernels::quant::BlockFormat fp4_format() const {
    return use_nvfp4 ? kernels::quant::BlockFormat::nvfp4 : kernels::quant::BlockFormat::mxfp4;
  }
  [[nodiscard]] int64_t fp4_block() const { return use_nvfp4 ? 16 : 32; }
  [[nodiscard]] kernels::quant::SfLayout a_sf_layout() const {
    return use_nvfp4 && !use_128x4_sf_layout ? kernels::quant::SfLayout::swizzled_8x4
                                             : kernels::quant::SfLayout::swizzled_128x4;
  }
  [[nodiscard]] kernels::quant::SfLayout b_sf_layout() const { return kernels::quant::SfLayout::swizzled_128x4; }
  // The refcheck's rule: the reference's cosine-similarity threshold, or 0 where it compares
  // elements (isclose, the groupwise routines).
  [[nodiscard]] double cosine_threshold() const;
};

// The reference's formulas (gemm.md), its defect included: bmm_fp8's bytes lack the batch factor.
[[nodiscard]] double gemm_flops(const GemmProblem& p);
[[nodiscard]] double gemm_bytes(const GemmProblem& p);

// What one call reads and writes, for the backends; scales and bias null where the routine has none.
struct GemmOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* out = nullptr;
  const float* a_scale = nullptr;  // per-tensor: one dequantization scale; groupwise: the layout of `major`
  const float* b_scale = nullptr;
  const void* bias = nullptr;
  // mm_fp4: the block scale bytes (GemmProblem's layouts) and alpha (NVFP4: 1 / (gA gB); MXFP4: 1).
  const uint8_t* a_block_scales = nullptr;
  const uint8_t* b_block_scales = nullptr;
  float alpha = 1.0f;
};

class GemmCase final : public Case {
 public:
  explicit GemmCase(GemmProblem problem) : p_(std::move(problem)) {}

  [[nodiscard]] double flops() const override { return gemm_flops(p_); }
  [[nodiscard]] double bytes() const override { return gemm_bytes(p_); }
  [[nodiscard]] std::size_t bytes_per_copy() const override;
  [[nodiscard]] std::size_t reference_bytes() const override;
  [[nodiscard]] std::vector<TensorInfo> tensors() const override;
  void describe(const Log& log) const override;
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override;
  [[nodiscard]] std::vector<CheckedOutput> outputs() const override;
  [[nodiscard]] std::vector<std::vector<float>> reference(cudaStream_t stream) override;
  [[nodiscard]] std::vector<Comparison> compare(const std::vector<CheckedOutput>& outputs,
                                                const std::vector<std::vector<float>>& expected,
                                                const std::vector<std::vector<float>>& got) const override;

  [[nodiscard]] const GemmProblem& problem() const noexcept { return p_; }
  [[nodiscard]] int copies() const noexcept { return static_cast<int>(copies_.size()); }
  [[nodiscard]] GemmOperands operands(int copy) const;

 private:
  struct Copy {
    DeviceBuffer a;
    DeviceBuffer b;
    DeviceBuffer out;
    DeviceBuffer a_scale;
    DeviceBuffer b_scale;
    DeviceBuffer bias;
    DeviceBuffer a_block_scales;  // mm_fp4
    DeviceBuffer b_block_scales;
    float alpha = 1.0f;
    float a_global_scale = 1.0f;  // NVFP4's gA, gB (the reference's dequantization divides by them)
    float b_global_scale = 1.0f;
  };
  void build_per_tensor(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const;
  void build_groupwise(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const;
  void build_fp4(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const;

  GemmProblem p_;
  std::vector<Copy> copies_;
};

// The refcheck of the cosine routines: the reference's rule (cosine similarity with the reference
// at least `threshold`) and kbench's (the output's L2 norm within 1 - threshold of the reference's:
// cosine similarity alone passes an output off by any constant factor, a lost dequantization scale).
[[nodiscard]] std::vector<Comparison> compare_by_cosine(std::span<const float> expected, std::span<const float> got,
                                                        double threshold);

}  // namespace kbench
