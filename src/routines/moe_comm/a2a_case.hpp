// moe_a2a_dispatch_combine: one rank's view of the MoE all-to-all (one process per GPU). The case
// builds every rank's inputs on the host from the per-rank seeds (so each rank knows what its peers
// send without asking them), quantizes the hidden states as the reference does before dispatch,
// and owns the symmetric workspace that both backends use: every payload's receive slots
// [ranks][max_tokens], the expert-stage results to send back and the results received, laid out
// by kernels/moe_comm (A2aLayout) and mapped into every rank's address space (CUDA IPC). With
// --real_math it also holds the weights of the rank's experts, and the refcheck compares the output
// with the single-GPU layer of all experts over the rank's tokens (the MoE family's fp32 reference).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/moe_comm/a2a.hpp"
#include "routines/moe/moe_case.hpp"

namespace kbench {

namespace dist {
class World;
}

// The hidden states' format on the wire (--quant_dtype).
enum class A2aQuant { none, fp8, nvfp4, fp8_block_scale };

[[nodiscard]] std::string_view a2a_quant_name(A2aQuant quant);

struct A2aProblem {
  int64_t tokens = 0;      // per rank
  int64_t hidden = 0;
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t max_tokens = 0;  // the workspace's slots per source rank
  DType input_dtype = DType::bfloat16;
  A2aQuant quant = A2aQuant::none;
  int ranks = 1;
  int rank = 0;
  bool validate = false;
  bool real_math = false;    // the MoE layer of the rank's experts between dispatch and combine
  int64_t intermediate = 0;  // its I (--intermediate_size)

  [[nodiscard]] int64_t experts_per_rank() const { return experts / ranks; }
  [[nodiscard]] int64_t input_bytes() const { return dtype_size(input_dtype); }
};

// One rank's tokens as the reference draws them (seed + rank), and their payloads on the wire.
struct A2aRankInputs {
  std::vector<float> hidden;          // [tokens][hidden], the input dtype's values
  std::vector<int32_t> expert_ids;    // [tokens][top_k], distinct per token
  std::vector<float> weights;         // [tokens][top_k], uniform [0, 1)
  std::vector<std::vector<uint8_t>> payloads;  // the rows each payload sends, [tokens][row bytes]
};

// The rank's inputs drawn from seed + rank: normal hidden states in the input dtype, each token's
// experts the first k of a random permutation, weights uniform [0, 1).
[[nodiscard]] A2aRankInputs draw_rank_inputs(const A2aProblem& p, uint64_t seed, int rank);

// The per-tensor scales every rank quantizes with, from every rank's tokens.
struct A2aScales {
  float fp8_scale = 1.0f;           // amax / 448
  float nvfp4_global_scale = 1.0f;  // 2688 / amax
};
[[nodiscard]] A2aScales a2a_scales(const std::vector<A2aRankInputs>& ranks);

// Fills in.payloads: the hidden states in the wire format, the expert ids, the weights, and the
// block scales of fp8_block_scale (fp32, 1 x 128) or nvfp4 (e4m3, 1 x 16).
void quantize_payloads(const A2aProblem& p, const A2aScales& scales, A2aRankInputs& in);

// The reference's traffic over all ranks (bytes), from every rank's routing.
struct A2aTraffic {
  double dispatch = 0;
  double combine = 0;
  double fp8_block_wire = 0;  // fp8_block_scale's dispatch as sent (the reference counts 2-byte values)
};
[[nodiscard]] A2aTraffic reference_traffic(const A2aProblem& p, const std::vector<A2aRankInputs>& ranks);

// --real_math: the MoE layer (kbench's MoE family, DeepSeek FP8 or NVFP4 by --quant_dtype, SwiGLU,
// its trtllm weights: expert e's from the seed and e, whichever rank holds it) over `tokens` tokens
// with experts [first_expert, first_expert + experts) local. x's NVFP4 global scale is the wire's.
[[nodiscard]] MoeProblem a2a_moe_problem(const A2aProblem& p, int64_t tokens, int64_t first_expert, int64_t experts,
                                         float nvfp4_global_scale);
// This rank's expert stage: its experts over every receive slot (ranks x max_tokens "tokens").
[[nodiscard]] MoeProblem a2a_expert_stage_problem(const A2aProblem& p, float nvfp4_global_scale);

class MoeA2aCase final : public Case {
 public:
  explicit MoeA2aCase(A2aProblem problem);
  ~MoeA2aCase() override;

  [[nodiscard]] const A2aProblem& problem() const noexcept { return p_; }
  [[nodiscard]] const kernels::moe_comm::A2aLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] kernels::moe_comm::A2aRoute route(int copy) const;
  // The payloads' source rows of input set `copy`, in the layout's order.
  [[nodiscard]] std::vector<const void*> payload_sources(int copy) const;
  [[nodiscard]] void* workspace() const noexcept { return workspace_.get(); }
  // Every rank's workspace as mapped here (a device array, own at [rank]).
  [[nodiscard]] void* const* peers() const noexcept { return static_cast<void* const*>(peers_.get()); }
  [[nodiscard]] void* output() const noexcept { return output_.get(); }
  // The per-tensor scales of the hidden payload: fp8's amax / 448, nvfp4's global scale.
  [[nodiscard]] float fp8_scale() const noexcept { return fp8_scale_; }
  [[nodiscard]] float nvfp4_global_scale() const noexcept { return nvfp4_global_scale_; }
  [[nodiscard]] kernels::moe_comm::HiddenFormat hidden_format() const;
  // --real_math: the layer of this rank's experts (its weights; its tokens are the receive slots).
  [[nodiscard]] const MoeCase& expert_case() const;

  // The reference's --validate: dispatch, the fake expert stage on the dequantized tokens, combine,
  // against the host's sum over all k experts of the unquantized tokens, with its tolerances.
  // `dispatch` and `combine` are the backend's. Returns the mismatches on this rank (0: passed).
  [[nodiscard]] int64_t validate(const std::function<void(cudaStream_t)>& dispatch,
                                 const std::function<void(cudaStream_t)>& combine, cudaStream_t stream);

  [[nodiscard]] double flops() const override { return 0.0; }
  [[nodiscard]] double bytes() const override { return traffic_.dispatch + traffic_.combine; }
  [[nodiscard]] std::size_t bytes_per_copy() const override;
  [[nodiscard]] std::size_t reference_bytes() const override;
  [[nodiscard]] std::vector<TensorInfo> tensors() const override;
  void describe(const Log& log) const override;
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> result_columns() const override;
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override;
  [[nodiscard]] std::vector<CheckedOutput> outputs() const override;
  void restore_inputs(cudaStream_t stream) override;
  [[nodiscard]] std::vector<std::vector<float>> reference(cudaStream_t stream) override;
  [[nodiscard]] std::vector<Comparison> compare(const std::vector<CheckedOutput>& outputs,
                                                const std::vector<std::vector<float>>& expected,
                                                const std::vector<std::vector<float>>& got) const override;

 private:
  // The refcheck's stand-in for the expert stage: rank d's result for source s's token t, element h.
  [[nodiscard]] float combine_pattern(int d, int s, int64_t t, int64_t h) const;

  A2aProblem p_;
  std::vector<int64_t> row_bytes_;
  kernels::moe_comm::A2aLayout layout_{};
  std::vector<A2aRankInputs> ranks_;  // every rank's inputs (this rank's at [rank])
  float fp8_scale_ = 1.0f;
  float nvfp4_global_scale_ = 1.0f;
  A2aTraffic traffic_;
  std::vector<DeviceBuffer> sources_;  // [copy][payload]
  DeviceBuffer workspace_;
  std::vector<void*> peer_bases_;      // as mapped here; the World unmaps the peers' on release
  DeviceBuffer peers_;
  DeviceBuffer output_;
  DeviceBuffer pattern_;               // combine_in as restore_inputs writes it
  uint64_t seed_ = 0;
  std::unique_ptr<MoeCase> experts_;   // --real_math
};

}  // namespace kbench
