// One MoE layer of the reference's MoE routines on Hopper: its inputs on the device, built as moe.md
// says for the routine and quantized to its format, the reference's FLOP and byte formulas, and the
// refcheck against an fp32 reference of the layer.
//
// The layer: route each token (kernels/moe/routing.hpp), and for each pick of a local expert e,
// y = act(x W1[e]^T) W2[e]^T with W1 (E, 2I, H) and W2 (E, H, I); output = sum over the picks of
// weight * y ([tokens][hidden], the input dtype); the routing's picks and weights are outputs too.
// The formats (MoeFormat):
//   fp8_block_scale: DeepSeek FP8 (trtllm_fp8_block_scale_moe): x quantized 1x128 in the call (the
//                    reference's cast is timed too), weights 128x128 per expert (outside timing),
//                    the intermediate 1x128;
//   fp8_per_tensor:  one scale per tensor: weights e4m3 with one scale per expert, x e4m3 (cast
//                    outside timing, trtllm_fp8_per_tensor_scale_moe) or quantized in the call under
//                    a static scale (cutlass_fused_moe fp8), the intermediate under a dynamic scale
//                    found in the call;
//   unquantized:     everything in the input dtype, bf16 or fp16 (cutlass_fused_moe base);
//   nvfp4:           NVFP4 weights (16-blocks, e4m3 scale bytes, per-expert global scale 2688 /
//                    amax, outside timing; trtllm_fp4_block_scale_moe, cutlass_fused_moe nvfp4), x
//                    NVFP4 (quantized outside timing under one global scale for the batch: 2688 /
//                    amax (trtllm) or 1 (cutlass --quantized_input); or in the call under global
//                    scale 1, cutlass), the intermediate re-quantized to NVFP4 under a dynamic global
//                    scale found in the call. The GEMMs take 16-bit A (the NVFP4 values times their
//                    global scale, exact: kernels/moe/block_operand.hpp) and expand the FP4 weights;
//                    the global scales are folded into each expert's alpha;
//   mxfp4_mxfp8:     MXFP4 weights (32-blocks, ue8m0 scale bytes, no global scale), x MXFP8
//                    (quantized outside timing), the intermediate re-quantized to MXFP8, each carried
//                    as its exact bf16 values (trtllm_fp4_block_scale_moe --fp4_mode mxfp4_mxfp8);
//   mxfp4_bf16:      MXFP4 weights, x and the intermediate bf16 (--fp4_mode mxfp4_bf16);
//   nvfp4_w4a16:     NVFP4 weights as nvfp4's, x and the intermediate 16-bit (b12x_fused_moe w4a16).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/moe/gated_activation.hpp"
#include "kernels/moe/block_operand.hpp"
#include "kernels/moe/permutation.hpp"
#include "kernels/moe/routing_reference.hpp"

namespace kbench {

// The 1x128 / 128x128 scale block of the DeepSeek FP8 format.
inline constexpr int64_t kMoeScaleBlock = 128;
// The refcheck's rtol of the layer's output (MoeCase::compare adds an atol relative to its RMS).
inline constexpr double kMoeOutputRelativeTolerance = 2e-2;

enum class MoeFormat { fp8_block_scale, fp8_per_tensor, unquantized, nvfp4, mxfp4_mxfp8, mxfp4_bf16, nvfp4_w4a16 };

// The refcheck's atol of the layer's output as a fraction of its RMS, by format (MoeCase::compare
// says why), and the tolerance it makes with kMoeOutputRelativeTolerance for `expected`.
[[nodiscard]] double moe_output_rms_tolerance(MoeFormat format);
[[nodiscard]] Tolerance moe_output_tolerance(double rms_fraction, const std::vector<float>& expected);

// Where the routine's inputs come from (moe.md, input construction).
enum class MoeInputs {
  trtllm,     // logits N(0,1), hidden 2 N(0,1), weights N(0,1); bias 0.1
  cutlass,    // logits, hidden N(0,1) in the input dtype, weights N(0,1) / 10
  cute_dsl,   // hidden and weights N(0,1) / 10 bf16, NVFP4 under global scale 1; fp32 logits routed
              // (softmax top-k, renormalized) outside the call
  b12x,       // as cute_dsl, x reaching the call in bf16 (quantized in it, or not: w4a16)
};

// Tokens and picks a caller gives instead of the routine's draws (the MoE all-to-all's single-GPU
// reference of its expert stage): x's values [tokens][hidden] (representable in the input dtype),
// each token's picks (global expert ids) and their weights [tokens][top_k]. The picks are then
// inputs (routing_in_call false): the routing's logits are drawn but not used.
struct MoeGivenTokens {
  std::vector<float> hidden;
  std::vector<int32_t> expert_ids;
  std::vector<float> weights;
  // fp8_block_scale, optional: x as the caller quantized it (e4m3 codes [tokens][hidden], fp32 1x128
  // scales [tokens][hidden / 128]); the reference then reads these instead of quantizing x by the
  // pipeline's rule (power-of-two scales).
  std::vector<uint8_t> fp8_codes;
  std::vector<float> fp8_scales;
};

struct MoeProblem {
  int64_t tokens = 0;
  int64_t hidden = 0;
  int64_t intermediate = 0;       // I of this rank's weights (the TP shard)
  int64_t full_intermediate = 0;  // I of the layer: the reference's formulas count it whole
  kernels::moe::RoutingConfig routing;  // experts, top_k, method, groups, local window
  bool routing_bias = false;
  // The routing runs in the call (its stage timed, its ids and weights checked outputs), or once
  // outside it per input set (cute_dsl_fp4_block_scale_moe takes the picks as inputs).
  bool routing_in_call = true;
  bool routing_scales_on_input = false;  // llama4: the pick's weight multiplies x, the combine adds with 1
  kernels::moe::GatedActivation activation = kernels::moe::GatedActivation::swiglu;
  MoeFormat format = MoeFormat::fp8_block_scale;
  MoeInputs inputs = MoeInputs::trtllm;
  // fp8_per_tensor: x reaches the call already in e4m3 (cast outside timing), else it is quantized
  // in the call under its static scale (amax / 448, found when the inputs are made).
  bool hidden_in_fp8 = false;
  // nvfp4, mxfp4_mxfp8: x reaches the call already in NVFP4 / MXFP8 (quantized outside timing);
  // else nvfp4 quantizes it in the call under global scale 1.
  bool hidden_block_quantized = false;
  // nvfp4 with trtllm inputs: x's global scale where the caller sets it (> 0), else 2688 / amax(x).
  float hidden_global_scale = 0.0f;
  std::shared_ptr<const MoeGivenTokens> given;  // null: the routine's own draws
  DType input_dtype = DType::bfloat16;  // the hidden states before quantization, and the output
  DType logits_dtype = DType::float32;
  // Given, meaningless for kbench's layer: {flag, why}, warned about.
  std::vector<std::pair<std::string, std::string>> ignored_flags;

  [[nodiscard]] int64_t experts() const { return routing.experts; }
  [[nodiscard]] int64_t top_k() const { return routing.top_k; }
  [[nodiscard]] int64_t local_experts() const { return routing.local_num_experts; }
  [[nodiscard]] int64_t picks() const { return tokens * routing.top_k; }  // the most permuted rows
  [[nodiscard]] bool gated() const { return kernels::moe::is_gated(activation); }
  [[nodiscard]] int64_t w1_rows() const { return gated() ? 2 * intermediate : intermediate; }
  [[nodiscard]] int64_t w1_elements() const { return local_experts() * w1_rows() * hidden; }
  [[nodiscard]] int64_t w2_elements() const { return local_experts() * hidden * intermediate; }
  // FP4 weights (NVFP4 or MXFP4), their block format and block size.
  [[nodiscard]] bool nvfp4_weights() const { return format == MoeFormat::nvfp4 || format == MoeFormat::nvfp4_w4a16; }
  [[nodiscard]] bool fp4_weights() const {
    return nvfp4_weights() || format == MoeFormat::mxfp4_mxfp8 || format == MoeFormat::mxfp4_bf16;
  }
  [[nodiscard]] kernels::quant::BlockFormat weight_block_format() const {
    return nvfp4_weights() ? kernels::quant::BlockFormat::nvfp4 : kernels::quant::BlockFormat::mxfp4;
  }
  [[nodiscard]] int64_t weight_block() const {
    return nvfp4_weights() ? kernels::moe::kNvfp4Block : kernels::moe::kMxBlock;
  }
  // The weights' and x's NVFP4 global scales are 1 (cute_dsl's and b12x's inputs), else 2688 / amax.
  [[nodiscard]] bool unit_global_scales() const { return inputs == MoeInputs::cute_dsl || inputs == MoeInputs::b12x; }
  // x's block format where it is block-quantized outside the call (hidden_block_quantized).
  [[nodiscard]] kernels::quant::BlockFormat hidden_block_format() const {
    return format == MoeFormat::nvfp4 ? kernels::quant::BlockFormat::nvfp4 : kernels::quant::BlockFormat::mxfp8;
  }
  [[nodiscard]] int64_t hidden_block() const {
    return format == MoeFormat::nvfp4 ? kernels::moe::kNvfp4Block : kernels::moe::kMxBlock;
  }
  // Bytes of x's codes, block-quantized: packed e2m1 pairs (NVFP4) or e4m3 bytes (MXFP8).
  [[nodiscard]] int64_t hidden_code_bytes() const {
    return format == MoeFormat::nvfp4 ? tokens * hidden / 2 : tokens * hidden;
  }
  // The weights' dtype: e4m3, packed e2m1 pairs (FP4), or the input dtype (unquantized).
  [[nodiscard]] DType weight_dtype() const {
    if (fp4_weights()) return DType::uint8;
    return format == MoeFormat::unquantized ? input_dtype : DType::fp8_e4m3;
  }
  // Bytes of `elements` weights (two FP4 codes a byte).
  [[nodiscard]] std::size_t weight_bytes(int64_t elements) const {
    return fp4_weights() ? static_cast<std::size_t>(elements / 2) : bytes_of(elements, weight_dtype());
  }
  // The GEMMs' A (the gathered x and the intermediate): e4m3, or the input dtype (unquantized, and
  // the FP4-weight formats' 16-bit operand values).
  [[nodiscard]] DType activation_dtype() const {
    return format == MoeFormat::unquantized || fp4_weights() ? input_dtype : DType::fp8_e4m3;
  }
  // FP4 weights: an expert's scale bytes of W1 / W2, [rows][k / block] in the 128x4 swizzle.
  [[nodiscard]] int64_t w1_sf_bytes() const { return sf_bytes(w1_rows(), hidden); }
  [[nodiscard]] int64_t w2_sf_bytes() const { return sf_bytes(hidden, intermediate); }
  // Bytes of one input and one weight element in the reference's byte formula (moe.md): nvfp4 0.5 +
  // 1/16 of scale, mxfp4 0.5 + 1/32, mxfp8 1 + 1/32, fp8 1 (scales not counted), else the dtype's
  // size (mxfp4_bf16's input: the input dtype's; b12x's always, as the reference counts it).
  [[nodiscard]] double formula_input_bytes() const {
    if (inputs == MoeInputs::b12x || format == MoeFormat::mxfp4_bf16) return static_cast<double>(dtype_size(input_dtype));
    if (format == MoeFormat::nvfp4) return 0.5625;
    if (format == MoeFormat::mxfp4_mxfp8) return 1.03125;
    return formula_weight_bytes();
  }
  [[nodiscard]] double formula_weight_bytes() const {
    if (nvfp4_weights()) return 0.5625;
    if (fp4_weights()) return 0.53125;
    return static_cast<double>(dtype_size(weight_dtype()));
  }
  // The weights' fp32 scales: 128x128 blocks per expert, one per expert (fp8_per_tensor's
  // dequantization scale, nvfp4's global scale), or none (MXFP4: its scale bytes only).
  [[nodiscard]] int64_t w1_scale_count() const {
    if (format == MoeFormat::fp8_per_tensor || nvfp4_weights()) return local_experts();
    if (format != MoeFormat::fp8_block_scale) return 0;
    return local_experts() * (w1_rows() / kMoeScaleBlock) * (hidden / kMoeScaleBlock);
  }
  [[nodiscard]] int64_t w2_scale_count() const {
    if (format == MoeFormat::fp8_per_tensor || nvfp4_weights()) return local_experts();
    if (format != MoeFormat::fp8_block_scale) return 0;
    return local_experts() * (hidden / kMoeScaleBlock) * (intermediate / kMoeScaleBlock);
  }

 private:
  [[nodiscard]] int64_t sf_bytes(int64_t rows, int64_t k) const {
    return kernels::quant::sf_bytes(kernels::quant::SfLayout::swizzled_128x4, rows, k / weight_block());
  }
};

// The reference's formulas (moe.md): FLOPs = T k (2 H w1 + 2 I H), w1 = 2I gated, I for Relu2, always
// the full k and I (local
// experts and the TP shard not reflected); bytes = T H e_in + T E b_logits (0 where the routing is
// outside the call) + A (w1 H + H I) e_w +
// T H b_out, e = MoeProblem::formula_input_bytes / formula_weight_bytes (cutlass nvfp4 counted as
// nvfp4 for the input too, quantized or not, as the reference does), A = the distinct
// experts the tokens pick (all experts, not only the local ones). `distinct_experts` < 0: unknown,
// min(E, T k) as the reference does.
[[nodiscard]] double moe_flops(const MoeProblem& p);
[[nodiscard]] double moe_bytes(const MoeProblem& p, int64_t distinct_experts);

// What one call reads and writes, for the backends. Weights hold the local experts only, expert
// offset first; their scales are fp8_block_scale: K-major, [expert][rows / 128][k / 128];
// fp8_per_tensor: [expert] (the dequantization scales).
// nvfp4: weights packed [local][rows][k / 2] with scale bytes per expert (MoeProblem::w1_sf_bytes
// apart), w1_scale / w2_scale the experts' global scales, fc1_alpha FC1's per-expert alpha.
struct MoeOperands {
  const void* logits = nullptr;  // [tokens][experts], MoeProblem::logits_dtype
  const void* bias = nullptr;    // bf16 [experts], or null
  // [tokens][hidden]: input_dtype, e4m3 (hidden_in_fp8, and MXFP8's codes) or packed e2m1 pairs (NVFP4)
  const void* hidden = nullptr;
  // fp8_per_tensor: x's one dequantization scale; nvfp4: x's NVFP4 global scale (device)
  const float* hidden_scale = nullptr;
  // hidden_block_quantized: x's scale bytes, linear [tokens][hidden / block] (NVFP4 e4m3, MXFP8 ue8m0)
  const uint8_t* hidden_sf = nullptr;
  const void* w1 = nullptr;      // [local][2I][H], MoeProblem::weight_dtype
  const float* w1_scale = nullptr;
  const uint8_t* w1_sf = nullptr;
  const void* w2 = nullptr;      // [local][H][I]
  const float* w2_scale = nullptr;
  const uint8_t* w2_sf = nullptr;
  const float* fc1_alpha = nullptr;
  const float* fc2_alpha = nullptr;  // nvfp4_w4a16: FC2's per-expert alpha (nvfp4's is the pipeline's)
  void* output = nullptr;        // [tokens][hidden], input_dtype
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
    DeviceBuffer hidden_scale;
    DeviceBuffer hidden_sf;
    DeviceBuffer w1;
    DeviceBuffer w1_scale;
    DeviceBuffer w1_sf;
    DeviceBuffer w2;
    DeviceBuffer w2_scale;
    DeviceBuffer w2_sf;
    DeviceBuffer fc1_alpha;
    DeviceBuffer fc2_alpha;
    DeviceBuffer output;
    DeviceBuffer expert_ids;
    DeviceBuffer expert_weights;
  };
  void build_hidden(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const;
  void build_weights(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const;
  void build_fp4_weights(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const;
  [[nodiscard]] std::vector<float> gathered_fp32_rows(const kernels::moe::PermutationIndex& index,
                                                       cudaStream_t stream) const;
  [[nodiscard]] kernels::moe::RoutingReference route_on_host(cudaStream_t stream) const;

  MoeProblem p_;
  std::vector<Copy> copies_;
  int64_t distinct_experts_ = -1;
};

}  // namespace kbench
