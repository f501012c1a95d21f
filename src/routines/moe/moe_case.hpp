// One MoE layer of the reference's trtllm_fp8_block_scale_moe (DeepSeek FP8): its inputs on the
// device, built as moe.md says and then quantized to DeepSeek FP8 block scales, the reference's FLOP
// and byte formulas, and the refcheck against an fp32 reference of the layer.
//
// The layer: route each token (kernels/moe/routing.hpp), and for each pick of a local expert e,
// y = act(x W1[e]^T) W2[e]^T with W1 (E, 2I, H) and W2 (E, H, I); output = sum over the picks of
// weight * y (bf16 [tokens][hidden]); the routing's picks and weights are outputs too. x is
// quantized 1x128 to e4m3 by the pipeline (inside the timed call, as the reference's own cast is);
// the weights are quantized 128x128 per expert when the inputs are made (outside timing).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/moe/gated_activation.hpp"
#include "kernels/moe/routing_reference.hpp"

namespace kbench {

// The 1x128 / 128x128 scale block of the DeepSeek FP8 format.
inline constexpr int64_t kMoeScaleBlock = 128;

struct MoeProblem {
  int64_t tokens = 0;
  int64_t hidden = 0;
  int64_t intermediate = 0;
  kernels::moe::RoutingConfig routing;  // experts, top_k, method, groups, local window
  bool routing_bias = false;
  kernels::moe::GatedActivation activation = kernels::moe::GatedActivation::swiglu;
  DType input_dtype = DType::bfloat16;  // the hidden states before quantization, and the output
  // Given, meaningless for kbench's layer: {flag, why}, warned about.
  std::vector<std::pair<std::string, std::string>> ignored_flags;

  [[nodiscard]] int64_t experts() const { return routing.experts; }
  [[nodiscard]] int64_t top_k() const { return routing.top_k; }
  [[nodiscard]] int64_t local_experts() const { return routing.local_num_experts; }
  // The reference's logits: fp32 for deepseek_v3, else bf16 (moe.md, input construction).
  [[nodiscard]] DType logits_dtype() const {
    return routing.method == kernels::moe::RoutingMethod::deepseek_v3 ? DType::float32 : DType::bfloat16;
  }
  [[nodiscard]] int64_t picks() const { return tokens * routing.top_k; }  // the most permuted rows
  [[nodiscard]] int64_t w1_rows() const { return 2 * intermediate; }
  [[nodiscard]] int64_t w1_elements() const { return local_experts() * w1_rows() * hidden; }
  [[nodiscard]] int64_t w2_elements() const { return local_experts() * hidden * intermediate; }
  [[nodiscard]] int64_t w1_scale_count() const {
    return local_experts() * (w1_rows() / kMoeScaleBlock) * (hidden / kMoeScaleBlock);
  }
  [[nodiscard]] int64_t w2_scale_count() const {
    return local_experts() * (hidden / kMoeScaleBlock) * (intermediate / kMoeScaleBlock);
  }
};

// The reference's formulas (moe.md): FLOPs = T k (2 H 2I + 2 I H), always the full k and I (local
// experts not reflected); bytes = T H (fp8) + T E b_logits + A (2I H + H I) (fp8) + T H 2 (bf16 out),
// A = the distinct experts the tokens pick (all experts, not only the local ones; block scales not
// counted). `distinct_experts` < 0: unknown, min(E, T k) as the reference does.
[[nodiscard]] double moe_flops(const MoeProblem& p);
[[nodiscard]] double moe_bytes(const MoeProblem& p, int64_t distinct_experts);

// What one call reads and writes, for the backends. Weights hold the local experts only, expert
// offset first; their scales are K-major, [expert][rows / 128][k / 128].
struct MoeOperands {
  const void* logits = nullptr;      // [tokens][experts], MoeProblem::logits_dtype()
  const void* bias = nullptr;        // bf16 [experts], or null
  const uint16_t* hidden = nullptr;  // bf16 [tokens][hidden]
  const uint8_t* w1 = nullptr;       // e4m3 [local][2I][H]
  const float* w1_scale = nullptr;
  const uint8_t* w2 = nullptr;  // e4m3 [local][H][I]
  const float* w2_scale = nullptr;
  uint16_t* output = nullptr;  // bf16 [tokens][hidden]
  // The routing's outputs, [tokens][top_k] (best first): checked exactly against the host routing.
  int32_t* expert_ids = nullptr;
  float* expert_weights = nullptr;
};

class MoeCase final : public Case {
 public:
  explicit MoeCase(MoeProblem problem) : p_(std::move(problem)) {}

  [[nodiscard]] double flops() const override { return moe_flops(p_); }
  [[nodiscard]] double bytes() const override { return moe_bytes(p_, distinct_experts_); }
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

  [[nodiscard]] const MoeProblem& problem() const noexcept { return p_; }
  [[nodiscard]] int copies() const noexcept { return static_cast<int>(copies_.size()); }
  [[nodiscard]] MoeOperands operands(int copy) const;

 private:
  struct Copy {
    DeviceBuffer logits;
    DeviceBuffer bias;
    DeviceBuffer hidden;
    DeviceBuffer w1;
    DeviceBuffer w1_scale;
    DeviceBuffer w2;
    DeviceBuffer w2_scale;
    DeviceBuffer output;
    DeviceBuffer expert_ids;
    DeviceBuffer expert_weights;
  };
  void build_weights(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const;
  [[nodiscard]] kernels::moe::RoutingReference route_on_host(cudaStream_t stream) const;

  MoeProblem p_;
  std::vector<Copy> copies_;
  int64_t distinct_experts_ = -1;
};

}  // namespace kbench
