// One block-quantization problem (mxfp8_quantize, mxfp4_quantize, nvfp4_quantize,
// nvfp4_batched_quantize): its tensors on the device, the formulas, the host reference, the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/quantization/quantize.hpp"

namespace kbench {

enum class QuantVariant { mxfp8, mxfp4, nvfp4, nvfp4_batched };

struct QuantProblem {
  QuantVariant variant = QuantVariant::nvfp4;
  int64_t batch_size = 1;  // nvfp4_batched_quantize's batches; 1 for the others
  int64_t m = 0;
  int64_t k = 0;
  DType input_dtype = DType::bfloat16;
  int64_t alignment = 32;  // mxfp8: columns padded to a multiple of it
  kernels::quant::SfLayout layout = kernels::quant::SfLayout::swizzled_128x4;
  int sf_vec_size = 16;    // NVFP4's block; 32 for the MX formats
  float global_scale = 1.0f;
  bool do_shuffle = false;
  bool per_token = false;
  bool enable_pdl = false;
  std::vector<std::string> ignored_flags;  // given, meaningless for this routine: warned about

  [[nodiscard]] int64_t elements() const { return batch_size * m * k; }
  // The kernel's sizes and options (no pointers).
  [[nodiscard]] kernels::QuantizeParams shape() const;
};

// The reference's formulas (norm_quant.md), its quirks included (mxfp8 divides by --alignment).
[[nodiscard]] double quant_flops(const QuantProblem& p);
[[nodiscard]] double quant_bytes(const QuantProblem& p);

class QuantCase final : public Case {
 public:
  explicit QuantCase(QuantProblem problem) : p_(std::move(problem)) {}

  [[nodiscard]] double flops() const override { return quant_flops(p_); }
  [[nodiscard]] double bytes() const override { return quant_bytes(p_); }
  [[nodiscard]] std::size_t bytes_per_copy() const override;
  [[nodiscard]] std::size_t reference_bytes() const override { return 0; }  // the reference runs on the host
  [[nodiscard]] std::vector<TensorInfo> tensors() const override;
  void describe(const Log& log) const override;
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override;
  [[nodiscard]] std::vector<CheckedOutput> outputs() const override;
  [[nodiscard]] std::vector<std::vector<float>> reference(cudaStream_t stream) override;

  [[nodiscard]] const QuantProblem& problem() const noexcept { return p_; }
  // Input set `copy` as kbench's kernel takes it.
  [[nodiscard]] kernels::QuantizeParams params(int copy) const;

 private:
  struct Copy {
    DeviceBuffer input;
    DeviceBuffer output;
    DeviceBuffer scales;
    DeviceBuffer token_scales;  // per-token only
  };

  QuantProblem p_;
  std::vector<Copy> copies_;
};

}  // namespace kbench
