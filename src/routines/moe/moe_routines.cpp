#include "routines/moe/moe_routines.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "routines/moe/kbench_backends.hpp"
#include "routines/moe/moe_case.hpp"

namespace kbench {
namespace {

namespace moe = kernels::moe;

// Tensors beyond 2^40 elements are a typo, not a benchmark.
constexpr double kMaxElements = 1099511627776.0;

constexpr std::array<std::pair<std::string_view, moe::RoutingMethod>, 5> kRoutingMethods = {{
    {"renormalize", moe::RoutingMethod::renormalize},
    {"deepseek_v3", moe::RoutingMethod::deepseek_v3},
    {"llama4", moe::RoutingMethod::llama4},
    {"renormalize_naive", moe::RoutingMethod::renormalize_naive},
    {"topk", moe::RoutingMethod::topk},
}};

// The reference's ActivationType names (case-insensitive there too); only the gated two run here.
constexpr std::array<std::string_view, 11> kActivationNames = {"Gelu",  "Relu",       "Silu",       "Swiglu",
                                                               "Geglu", "SwigluBias", "Relu2",      "SwigluStep",
                                                               "GegluTanh", "Identity", "Situ"};

int64_t positive(const CaseArgs& args, const char* flag) {
  const int64_t v = args.integer(flag);
  if (v <= 0) throw CaseError(std::string("--") + flag + " must be positive, got " + std::to_string(v));
  return v;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

moe::GatedActivation activation_flag(const CaseArgs& args) {
  const std::string& text = args.text("activation-type");
  const auto known = std::find_if(kActivationNames.begin(), kActivationNames.end(),
                                  [&](std::string_view name) { return lower(name) == lower(text); });
  if (known == kActivationNames.end()) {
    std::string names;
    for (const std::string_view name : kActivationNames) names += (names.empty() ? "" : ", ") + std::string(name);
    throw CaseError("--activation-type " + text + " is not an activation type (" + names + ")");
  }
  if (*known == "Swiglu") return moe::GatedActivation::swiglu;
  if (*known == "Geglu") return moe::GatedActivation::geglu;
  throw CaseError("--activation-type " + std::string(*known) +
                  " is not supported by kbench's MoE: only the gated Swiglu and Geglu (exact erf) run");
}

// --n_group / --topk_group: None, or a value <= 0, means no groups (the reference's rule).
int optional_groups(const CaseArgs& args, const char* flag) {
  const std::optional<int64_t> v = args.optional_integer(flag);
  return v && *v > 0 ? static_cast<int>(*v) : 0;
}

class FusedMoeRoutine final : public Routine {
 public:
  FusedMoeRoutine() { add_backend(make_moe_cuda_backend()); }

  [[nodiscard]] std::string_view name() const override { return "trtllm_fp8_block_scale_moe"; }
  [[nodiscard]] std::string_view family() const override { return "moe"; }
  [[nodiscard]] std::string_view description() const override {
    return "MoE layer with DeepSeek FP8 block scales (activations 1 x 128, weights 128 x 128): routing, FC1, "
           "gated activation, FC2, weighted top-k sum.";
  }
  [[nodiscard]] std::string_view test_name() const override { return "testTrtllmFp8BlockScaleMoe"; }

  [[nodiscard]] std::vector<FlagSpec> flags() const override {
    // The reference's MoE parser: its routines share these flags.
    std::vector<std::string> methods;
    for (const auto& [name, method] : kRoutingMethods) methods.emplace_back(name);
    return {
        {"num_tokens", FlagKind::integer, std::nullopt, "Tokens T.", {}, true, ""},
        {"hidden_size", FlagKind::integer, std::nullopt, "Hidden size H (a multiple of 128).", {}, true, ""},
        {"intermediate_size", FlagKind::integer, std::nullopt, "Intermediate size I (a multiple of 128).", {}, true,
         ""},
        {"num_experts", FlagKind::integer, std::nullopt, "Experts E (1 to 256).", {}, true, ""},
        {"top_k", FlagKind::integer, std::nullopt, "Experts per token k.", {}, true, ""},
        {"input_dtype", FlagKind::text, "bfloat16", "The hidden states' dtype before quantization: bfloat16.", {},
         false, ""},
        {"weight_dtype", FlagKind::text, "bfloat16", "Recorded only (the weights are FP8 e4m3 with block scales).", {},
         false, ""},
        {"n_group", FlagKind::integer, std::nullopt, "deepseek_v3: expert groups (None or <= 0: none).", {}, false, ""},
        {"topk_group", FlagKind::integer, std::nullopt, "deepseek_v3: groups kept (None or <= 0: none).", {}, false,
         ""},
        {"routed_scaling_factor", FlagKind::real, "2.5", "deepseek_v3: the routing weights' factor.", {}, false, ""},
        {"local_expert_offset", FlagKind::integer, "0", "First expert of this rank (expert parallelism).", {}, false,
         ""},
        {"local_num_experts", FlagKind::integer, std::nullopt, "Experts of this rank (None: all).", {}, false, ""},
        {"routing_method", FlagKind::text, "deepseek_v3", "Routing method.", methods, false, ""},
        {"use_shuffled_weight", FlagKind::boolean, "false", "Accepted, ignored (the reference's Blackwell layout).", {},
         false, ""},
        {"weight_layout", FlagKind::integer, "0", "Accepted, ignored (the reference's Blackwell layout).", {}, false,
         ""},
        {"use_routing_bias", FlagKind::boolean, "false", "deepseek_v3: a routing bias (the constant 0.1).", {}, false,
         ""},
        {"use_routing_scales_on_input", FlagKind::boolean, "false",
         "Accepted, ignored (trtllm_fp8_per_tensor_scale_moe's).", {}, false, ""},
        {"activation-type", FlagKind::text, "Swiglu", "Gated activation: Swiglu or Geglu (others refused).", {}, false,
         ""},
        {"fp4_mode", FlagKind::text, "nvfp4", "Accepted, ignored (trtllm_fp4_block_scale_moe's).", {}, false, ""},
        {"cutlass_variant", FlagKind::text, "base", "Accepted, ignored (cutlass_fused_moe's).", {}, false, ""},
        {"quantized_input", FlagKind::boolean, "false", "Accepted, ignored (cutlass_fused_moe's).", {}, false, ""},
        {"tp_size", FlagKind::integer, "1", "Accepted, ignored (cutlass_fused_moe's TP simulation).", {}, false, ""},
        {"tp_rank", FlagKind::integer, "0", "Accepted, ignored (cutlass_fused_moe's TP simulation).", {}, false, ""},
        {"ep_size", FlagKind::integer, "1", "Accepted, ignored (cutlass_fused_moe's EP simulation).", {}, false, ""},
        {"ep_rank", FlagKind::integer, "0", "Accepted, ignored (cutlass_fused_moe's EP simulation).", {}, false, ""},
    };
  }

  [[nodiscard]] std::vector<std::pair<std::string, std::string>> renamed_flag_columns() const override {
    return {{"activation-type", "activation_type"}};
  }

  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"cuda"}; }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    MoeProblem p;
    p.tokens = positive(args, "num_tokens");
    p.hidden = positive(args, "hidden_size");
    p.intermediate = positive(args, "intermediate_size");
    for (const auto& [value, flag] :
         {std::pair{p.hidden, "hidden_size"}, std::pair{p.intermediate, "intermediate_size"}}) {
      if (value % kMoeScaleBlock != 0) {
        throw CaseError(std::string("--") + flag + " " + std::to_string(value) +
                        " is not a multiple of 128 (the FP8 block scales cover whole 128-blocks)");
      }
    }
    moe::RoutingConfig& r = p.routing;
    r.experts = static_cast<int>(std::min<int64_t>(positive(args, "num_experts"), 1 << 20));
    r.top_k = static_cast<int>(std::min<int64_t>(positive(args, "top_k"), 1 << 20));
    const std::string& method = args.text("routing_method");
    r.method = std::find_if(kRoutingMethods.begin(), kRoutingMethods.end(), [&](const auto& m) {
                 return m.first == method;
               })->second;  // the flag's choices are kRoutingMethods' names
    r.n_group = optional_groups(args, "n_group");
    r.topk_group = optional_groups(args, "topk_group");
    r.routed_scaling_factor = static_cast<float>(args.real("routed_scaling_factor"));
    r.local_expert_offset = static_cast<int>(std::clamp<int64_t>(args.integer("local_expert_offset"), -1, 1 << 20));
    r.local_num_experts = static_cast<int>(
        std::clamp<int64_t>(args.optional_integer("local_num_experts").value_or(r.experts), -1, 1 << 20));
    if (r.local_num_experts < 1) {
      throw CaseError("--local_num_experts must be positive, got " + args.display("local_num_experts"));
    }
    if (const std::string why = moe::routing_config_error(r); !why.empty()) {
      throw CaseError("--routing_method " + method + " with --num_experts " + std::to_string(r.experts) + " --top_k " +
                      std::to_string(r.top_k) + " --n_group " + std::to_string(r.n_group) + " --topk_group " +
                      std::to_string(r.topk_group) + " --local_expert_offset " + std::to_string(r.local_expert_offset) +
                      " --local_num_experts " + std::to_string(r.local_num_experts) + ": " + why);
    }
    const double rows = static_cast<double>(std::max<int64_t>(p.picks(), r.local_num_experts));
    if (rows * static_cast<double>(std::max(p.hidden, 2 * p.intermediate)) > kMaxElements) {
      throw CaseError("--num_tokens x --top_k x --hidden_size / 2 --intermediate_size is over 2^40 elements");
    }
    if (args.text("input_dtype") != "bfloat16") {
      throw CaseError("--input_dtype " + args.text("input_dtype") +
                      " is not supported by this routine (takes bfloat16: the reference's hidden states are bfloat16)");
    }
    p.activation = activation_flag(args);
    if (args.flag("use_routing_bias")) {
      if (r.method == moe::RoutingMethod::deepseek_v3) {
        p.routing_bias = true;
      } else {
        p.ignored_flags.emplace_back("use_routing_bias", "only deepseek_v3 routing reads a bias");
      }
    }
    const std::string layout = "a weight layout of the reference's Blackwell kernels; kbench's weights are K-major";
    const std::string others = "a flag of the reference's other MoE routines";
    const std::pair<const char*, std::string> ignored[] = {
        {"use_shuffled_weight", layout},
        {"weight_layout", layout},
        {"use_routing_scales_on_input", "the reference does not pass it to this routine"},
        {"fp4_mode", others},
        {"cutlass_variant", others},
        {"quantized_input", others},
        {"tp_size", others + " (cutlass_fused_moe's TP simulation)"},
        {"tp_rank", others + " (cutlass_fused_moe's TP simulation)"},
        {"ep_size", others + " (cutlass_fused_moe's EP simulation; use --local_expert_offset / --local_num_experts)"},
        {"ep_rank", others + " (cutlass_fused_moe's EP simulation; use --local_expert_offset / --local_num_experts)"},
    };
    for (const auto& [flag, why] : ignored) {
      if (args.given(flag)) p.ignored_flags.emplace_back(flag, why);
    }
    return std::make_unique<MoeCase>(std::move(p));
  }
};

}  // namespace

void register_moe_routines(RoutineRegistry& registry) { registry.add(std::make_unique<FusedMoeRoutine>()); }

}  // namespace kbench
