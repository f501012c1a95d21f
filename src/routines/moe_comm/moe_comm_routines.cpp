#include "routines/moe_comm/moe_comm_routines.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/rank_group.hpp"
#include "routines/moe/kbench_backends.hpp"
#include "routines/moe_comm/a2a_backends.hpp"
#include "routines/moe_comm/a2a_case.hpp"
#include "routines/moe_comm/nccl_backends.hpp"
#include "routines/vendor_libraries.hpp"

namespace kbench {
namespace {

A2aQuant quant_flag(const std::string& text) {
  if (text == "None" || text == "none") return A2aQuant::none;
  if (text == "fp8") return A2aQuant::fp8;
  if (text == "nvfp4") return A2aQuant::nvfp4;
  if (text == "fp8_block_scale") return A2aQuant::fp8_block_scale;
  throw CaseError("--quant_dtype " + text + " is not one of None, fp8, nvfp4, fp8_block_scale");
}

// --real_math's layer: the reference's formats, and what the expert stage and kbench's MoE take.
void check_real_math(const A2aProblem& p) {
  if (p.intermediate <= 0) throw CaseError("--real_math needs --intermediate_size (the MoE layer's I)");
  constexpr int64_t kLargestIntermediate = int64_t{1} << 20;  // (keeps the layer's sizes far from overflow)
  if (p.intermediate % kMoeScaleBlock != 0 || p.intermediate > kLargestIntermediate) {
    throw CaseError("--real_math needs --intermediate_size a multiple of 128 up to 2^20 (the layer's FP8 / FP4 "
                    "blocks), got " + std::to_string(p.intermediate));
  }
  if (p.quant != A2aQuant::fp8_block_scale && p.quant != A2aQuant::nvfp4) {
    throw CaseError("--real_math needs --quant_dtype fp8_block_scale or nvfp4 (the MoE layer's formats), got " +
                    std::string(a2a_quant_name(p.quant)));
  }
  // The expert stage reads x and its scales in the receive slots as whole arrays: no row padding.
  const int64_t multiple = p.quant == A2aQuant::nvfp4 ? 256 : 512;
  if (p.hidden % multiple != 0) {
    throw CaseError("--real_math with --quant_dtype " + std::string(a2a_quant_name(p.quant)) + " needs --hidden_size a "
                    "multiple of " + std::to_string(multiple) + " (unpadded scale rows in the receive slots), got " +
                    std::to_string(p.hidden));
  }
  const MoeProblem layer = a2a_expert_stage_problem(p, 1.0f);
  if (const std::string why = kernels::moe::routing_config_error(layer.routing); !why.empty()) {
    throw CaseError("--real_math: " + why);
  }
  if (const auto why = kbench_expert_gemms_unsupported(layer)) throw CaseError("--real_math: " + *why);
}

class MoeA2aRoutine final : public Routine {
 public:
  MoeA2aRoutine() {
    add_backend(make_a2a_kernels_backend());
    add_backend(vendor_backend<A2aNcclBackend, NcclLibrary>({"nccl", "NCCL", "sm_70+"}));
  }

  [[nodiscard]] std::string_view name() const override { return "moe_a2a_dispatch_combine"; }
  [[nodiscard]] std::string_view family() const override { return "moe_comm"; }
  [[nodiscard]] std::string_view description() const override {
    return "MoE expert-parallel all-to-all, one process per GPU (mpirun -np N, srun, or kbench --nproc N): dispatch "
           "each token to the ranks of its experts, combine their results back.";
  }
  [[nodiscard]] std::string_view test_name() const override { return "testMoeA2aDispatchCombine"; }
  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"moe_a2a"}; }

  [[nodiscard]] std::vector<FlagSpec> flags() const override {
    return {
        {"num_tokens", FlagKind::integer, std::nullopt, "Tokens per rank.", {}, true, ""},
        {"hidden_size", FlagKind::integer, std::nullopt, "Hidden size H.", {}, true, ""},
        {"num_experts", FlagKind::integer, std::nullopt, "Experts E (a multiple of the ranks).", {}, true, ""},
        {"top_k", FlagKind::integer, std::nullopt, "Experts per token k (distinct).", {}, true, ""},
        {"input_dtype", FlagKind::text, "bfloat16", "The hidden states' and the results' dtype.",
         {"bfloat16", "float16"}, false, ""},
        {"quant_dtype", FlagKind::text, "None",
         "The hidden states on the wire: None (input dtype), fp8 (per-tensor), nvfp4, fp8_block_scale (1 x 128).",
         {"None", "fp8", "nvfp4", "fp8_block_scale"}, false, ""},
        {"max_num_tokens", FlagKind::integer, std::nullopt, "Receive slots per source rank (None: num_tokens).", {},
         false, ""},
        {"validate", FlagKind::boolean, "false",
         "Before timing: dispatch, a fake expert stage, combine, checked on every rank (the reference's tolerances).",
         {}, false, ""},
        {"per_phase_timing", FlagKind::boolean, "false", "Time dispatch and combine apart (= --per_stage_timing).", {},
         false, ""},
        {"real_math", FlagKind::boolean, "false",
         "The MoE layer of each rank's experts between dispatch and combine (kbench's MoE pipeline; quant_dtype "
         "fp8_block_scale or nvfp4).",
         {}, false, ""},
        {"intermediate_size", FlagKind::integer, std::nullopt, "The MoE layer's I (with --real_math).", {}, false, ""},
        {"use_lora", FlagKind::boolean, "false", "LoRA ids as a payload (not yet in kbench).", {}, false, ""},
        {"nvtx", FlagKind::boolean, "false", "Accepted, ignored (the reference's NVTX ranges).", {}, false, ""},
    };
  }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    A2aProblem p;
    p.tokens = positive_integer(args, "num_tokens");
    p.hidden = positive_integer(args, "hidden_size");
    p.experts = positive_integer(args, "num_experts");
    p.top_k = positive_integer(args, "top_k");
    p.max_tokens = args.optional_integer("max_num_tokens").value_or(p.tokens);
    p.input_dtype = args.text("input_dtype") == "float16" ? DType::float16 : DType::bfloat16;
    p.quant = quant_flag(args.text("quant_dtype"));
    p.validate = args.flag("validate");
    if (const RankGroup* group = rank_group()) {
      p.ranks = group->size();
      p.rank = group->rank();
    }
    p.real_math = args.flag("real_math");
    if (p.real_math) p.intermediate = args.optional_integer("intermediate_size").value_or(0);
    if (args.flag("use_lora")) throw CaseError("--use_lora is not yet in kbench's moe_a2a_dispatch_combine");
    if (p.experts % p.ranks != 0) {
      throw CaseError("--num_experts " + std::to_string(p.experts) + " is not a multiple of the " +
                      std::to_string(p.ranks) + " ranks (expert e lives on rank e / (E / ep))");
    }
    if (p.top_k > p.experts) {
      throw CaseError("--top_k " + std::to_string(p.top_k) + " exceeds --num_experts " + std::to_string(p.experts) +
                      " (a token's experts are distinct)");
    }
    if (p.max_tokens < p.tokens) {
      throw CaseError("--max_num_tokens " + std::to_string(p.max_tokens) + " is below --num_tokens " +
                      std::to_string(p.tokens));
    }
    // The workspace's slots (ranks x max tokens) and a slot's row are int32 in the kernels; the
    // element counts stay far from int64 overflow.
    if (p.max_tokens > std::numeric_limits<int32_t>::max() / p.ranks || p.hidden > std::numeric_limits<int32_t>::max()) {
      throw CaseError("--max_num_tokens " + std::to_string(p.max_tokens) + " x " + std::to_string(p.ranks) +
                      " ranks or --hidden_size " + std::to_string(p.hidden) + " is over 2^31 - 1");
    }
    if (static_cast<double>(p.max_tokens) * p.ranks * static_cast<double>(p.top_k) * static_cast<double>(p.hidden) >
        kMaxElements) {
      throw CaseError("--max_num_tokens x ranks x --top_k x --hidden_size is over 2^40 elements");
    }
    if (p.quant == A2aQuant::fp8_block_scale && p.hidden % 128 != 0) {
      throw CaseError("--quant_dtype fp8_block_scale needs --hidden_size a multiple of 128, got " + std::to_string(p.hidden));
    }
    if (p.quant == A2aQuant::nvfp4 && p.hidden % 64 != 0) {
      throw CaseError("--quant_dtype nvfp4 needs --hidden_size a multiple of 64 (16-element blocks, 4-byte scale rows), got " +
                      std::to_string(p.hidden));
    }
    if (p.hidden % 8 != 0) {  // the all-to-all's layout (make_a2a_layout): rows of whole 16-byte bf16 vectors
      throw CaseError("--hidden_size must be a multiple of 8, got " + std::to_string(p.hidden));
    }
    if (p.real_math) check_real_math(p);
    return std::make_unique<MoeA2aCase>(p);
  }
};

}  // namespace

void register_moe_comm_routines(RoutineRegistry& registry) { registry.add(std::make_unique<MoeA2aRoutine>()); }

}  // namespace kbench
