// One RMSNorm-family problem: its tensors on the device, the formulas, the reference and the call.
#pragma once

#include <cstdint>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/norm/rmsnorm.hpp"

namespace kbench {

enum class NormVariant { rmsnorm, fused_add_rmsnorm, gemma_rmsnorm, rmsnorm_quant, fused_add_rmsnorm_quant };

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
  std::vector<std::string> ignored_flags;  // given, meaningless for this routine: warned about

  [[nodiscard]] int64_t rows() const { return num_heads > 0 ? batch_size * num_heads : batch_size; }
  [[nodiscard]] int64_t elements() const { return rows() * hidden_size; }
  [[nodiscard]] bool fused_add() const {
    return variant == NormVariant::fused_add_rmsnorm || variant == NormVariant::fused_add_rmsnorm_quant;
  }
  // fused_add_rmsnorm normalises in place, into its input.
  [[nodiscard]] bool in_place() const { return variant == NormVariant::fused_add_rmsnorm; }
  [[nodiscard]] bool quantized() const { return is_fp8(out_dtype); }
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

  [[nodiscard]] const NormProblem& problem() const noexcept { return p_; }
  // Input set `copy` as every backend sees it (kbench's kernel parameters: pointers, sizes,
  // dtypes; output == input for the in-place fused_add_rmsnorm); kNoCopy: sizes and dtypes only.
  [[nodiscard]] kernels::RmsNormParams params(int copy) const;

 private:
  struct Copy {
    DeviceBuffer input;
    DeviceBuffer residual;  // fused add only
    DeviceBuffer output;    // absent when in place
  };
  void fill_inputs(int copy, cudaStream_t stream);

  NormProblem p_;
  uint64_t seed_ = 0;
  DeviceBuffer weight_;
  std::vector<Copy> copies_;
};

}  // namespace kbench
