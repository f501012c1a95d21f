// One norm-family problem (the RMSNorm variants, their fused FP4 forms, LayerNorm + FP8): its tensors
// on the device, the formulas, the reference and the call.
#pragma once

#include <cstdint>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/norm/layernorm.hpp"
#include "kernels/norm/rmsnorm.hpp"
#include "kernels/norm/rmsnorm_fp4.hpp"
#include "kernels/quantization/quantize.hpp"

namespace kbench {

enum class NormVariant {
  rmsnorm,
  fused_add_rmsnorm,
  gemma_rmsnorm,
  rmsnorm_quant,
  fused_add_rmsnorm_quant,
  gemma_fused_add_rmsnorm,
  fused_rmsnorm_silu,
  layernorm_quant,
  rmsnorm_fp4quant,
  add_rmsnorm_fp4quant,
};

struct NormProblem {
  NormVariant variant = NormVariant::rmsnorm;
  int64_t batch_size = 0;
  int64_t num_heads = 0;  // 0: 2-D input (batch, hidden)
  int64_t hidden_size = 0;
  DType input_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  float eps = 1e-6f;
  float scale = 1.0f;
  bool enable_pdl = false;
  // The FP4 routines: the block format (nvfp4: 16, mxfp4: 32), the scale layout (128x4 with
  // --is_sf_swizzled_layout, else linear; both with --output_both_sf_layouts), the global scale
  // (--use_global_scale passes g = 1, as the reference does: the same as none).
  kernels::quant::BlockFormat fp4_format = kernels::quant::BlockFormat::nvfp4;
  bool sf_swizzled = false;
  bool both_sf_layouts = false;
  bool use_global_scale = false;
  std::vector<std::string> ignored_flags;  // given, meaningless for this routine: warned about

  [[nodiscard]] int64_t rows() const { return num_heads > 0 ? batch_size * num_heads : batch_size; }
  [[nodiscard]] int64_t elements() const { return rows() * hidden_size; }
  [[nodiscard]] bool fused_add() const {
    return variant == NormVariant::fused_add_rmsnorm || variant == NormVariant::fused_add_rmsnorm_quant ||
           variant == NormVariant::gemma_fused_add_rmsnorm || variant == NormVariant::add_rmsnorm_fp4quant;
  }
  // fused_add_rmsnorm and gemma_fused_add_rmsnorm normalise in place, into their input.
  [[nodiscard]] bool in_place() const {
    return variant == NormVariant::fused_add_rmsnorm || variant == NormVariant::gemma_fused_add_rmsnorm;
  }
  [[nodiscard]] bool quantized() const { return is_fp8(out_dtype); }  // FP8 output
  [[nodiscard]] bool fp4() const {
    return variant == NormVariant::rmsnorm_fp4quant || variant == NormVariant::add_rmsnorm_fp4quant;
  }
  [[nodiscard]] bool layernorm() const { return variant == NormVariant::layernorm_quant; }
  [[nodiscard]] int64_t fp4_block() const { return fp4_format == kernels::quant::BlockFormat::nvfp4 ? 16 : 32; }
  // FP4: the scale tensors written, in order (linear first when both).
  [[nodiscard]] std::vector<kernels::quant::SfLayout> sf_layouts() const;
  // FP4: the host quantizer's shape of the codes and of scales in `layout`.
  [[nodiscard]] kernels::QuantizeParams fp4_shape(kernels::quant::SfLayout layout) const;
};

// compat.md's formulas.
[[nodiscard]] double norm_flops(const NormProblem& p);
[[nodiscard]] double norm_bytes(const NormProblem& p);

class NormCase final : public Case {
 public:
  static constexpr int kNoCopy = -1;
  explicit NormCase(NormProblem problem) : p_(std::move(problem)) {}

  [[nodiscard]] double flops() const override { return norm_flops(p_); }
  [[nodiscard]] double bytes() const override { return norm_bytes(p_); }
  [[nodiscard]] std::size_t bytes_per_copy() const override;
  [[nodiscard]] std::size_t reference_bytes() const override;
  [[nodiscard]] std::vector<TensorInfo> tensors() const override;
  void describe(const Log& log) const override;
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override;
  [[nodiscard]] std::vector<CheckedOutput> outputs() const override;
  void restore_inputs(cudaStream_t stream) override;
  [[nodiscard]] std::vector<std::vector<float>> reference(cudaStream_t stream) override;
  // FP4 outputs: bytes equal to the host quantizer's, but for codes and scales whose input lies at
  // a rounding boundary (within kFp4BoundaryTolerance, relative): see norm_case.cpp.
  [[nodiscard]] std::vector<Comparison> compare(const std::vector<CheckedOutput>& outputs,
                                                const std::vector<std::vector<float>>& expected,
                                                const std::vector<std::vector<float>>& got) const override;
  static constexpr double kFp4BoundaryTolerance = 1e-5;

  [[nodiscard]] const NormProblem& problem() const noexcept { return p_; }
  // Input set `copy` as every backend sees it (kbench's kernel parameters: pointers, sizes,
  // dtypes; output == input for the in-place fused_add_rmsnorm); kNoCopy: sizes and dtypes only.
  [[nodiscard]] kernels::RmsNormParams params(int copy) const;
  // The FP4 routines' and layernorm_quant's kernel parameters, likewise.
  [[nodiscard]] kernels::RmsNormFp4Params fp4_params(int copy) const;
  [[nodiscard]] kernels::LayerNormQuantParams layernorm_params(int copy) const;

 private:
  struct Copy {
    DeviceBuffer input;
    DeviceBuffer residual;  // fused add only
    DeviceBuffer output;    // absent when in place; FP4: the codes
    DeviceBuffer scales[2]; // FP4: the scale tensors of sf_layouts()
  };
  void fill_inputs(int copy, cudaStream_t stream);
  // Copy `copy_index`, or buffers that are all null for a negative index (parameters for shape
  // checks before anything is allocated).
  [[nodiscard]] const Copy& copy_or_unallocated(int copy_index) const;

  NormProblem p_;
  uint64_t seed_ = 0;
  DeviceBuffer weight_;
  DeviceBuffer beta_;  // layernorm_quant: weight_ is gamma, both fp32
  std::vector<Copy> copies_;
  std::vector<float> fp4_values_;  // FP4: the reference's normalised values y, [rows][hidden]
};

}  // namespace kbench
