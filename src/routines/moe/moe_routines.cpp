#include "routines/moe/moe_routines.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "routines/moe/cutlass_backends.hpp"
#include "routines/moe/kbench_backends.hpp"
#include "routines/moe/moe_case.hpp"
#include "routines/vendor_libraries.hpp"

namespace kbench {
namespace {

namespace moe = kernels::moe;

// Tensors beyond 2^40 elements are a typo, not a benchmark.

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

std::string_view routing_name(moe::RoutingMethod method) {
  for (const auto& [name, m] : kRoutingMethods) {
    if (m == method) return name;
  }
  return "?";
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The reference's name of --activation-type (any case), or an error listing the names.
std::string_view activation_name(const CaseArgs& args) {
  const std::string& text = args.text("activation-type");
  const auto known = std::find_if(kActivationNames.begin(), kActivationNames.end(),
                                  [&](std::string_view name) { return lower(name) == lower(text); });
  if (known == kActivationNames.end()) {
    std::string names;
    for (const std::string_view name : kActivationNames) names += (names.empty() ? "" : ", ") + std::string(name);
    throw CaseError("--activation-type " + text + " is not an activation type (" + names + ")");
  }
  return *known;
}

moe::GatedActivation activation_flag(const CaseArgs& args) {
  const std::string_view name = activation_name(args);
  if (name == "Swiglu") return moe::GatedActivation::swiglu;
  if (name == "Geglu") return moe::GatedActivation::geglu;
  throw CaseError("--activation-type " + std::string(name) +
                  " is not supported by kbench's MoE: only the gated Swiglu and Geglu (exact erf) run");
}

// b12x_fused_moe's activations, as its benchmark maps them: Swiglu -> silu, Geglu and GegluTanh ->
// gelu_tanh, Relu2 -> relu2 (non-gated: FC1 has I rows); others refused, as it refuses them.
moe::GatedActivation b12x_activation_flag(const CaseArgs& args) {
  const std::string_view name = activation_name(args);
  if (name == "Swiglu") return moe::GatedActivation::swiglu;
  if (name == "Geglu" || name == "GegluTanh") return moe::GatedActivation::geglu_tanh;
  if (name == "Relu2") return moe::GatedActivation::relu2;
  throw CaseError("b12x_fused_moe runs Swiglu, Geglu, GegluTanh and Relu2 only (as the reference), not " +
                  std::string(name));
}

// --n_group / --topk_group: None, or a value <= 0, means no groups (the reference's rule).
int optional_groups(const CaseArgs& args, const char* flag) {
  const std::optional<int64_t> v = args.optional_integer(flag);
  return v && *v > 0 ? static_cast<int>(*v) : 0;
}

// What distinguishes one MoE routine of the reference from another (one row of kMoeRoutines).
struct MoeRoutineRow {
  std::string_view name;
  std::string_view test_name;
  std::string_view description;
  MoeFormat format;
  MoeInputs inputs;
  std::string_view backend_alias;  // the reference's label of its one backend
  bool cutlass_baseline;           // a `cutlass` backend: CUTLASS's grouped GEMMs in kbench's pipeline
};

constexpr std::array<MoeRoutineRow, 6> kMoeRoutines = {{
    {"trtllm_fp8_block_scale_moe", "testTrtllmFp8BlockScaleMoe",
     "MoE layer with DeepSeek FP8 block scales (activations 1 x 128, weights 128 x 128): routing, FC1, gated "
     "activation, FC2, weighted top-k sum.",
     MoeFormat::fp8_block_scale, MoeInputs::trtllm, "trtllm", true},
    {"trtllm_fp8_per_tensor_scale_moe", "testTrtllmFp8PerTensorScaleMoe",
     "MoE layer with per-tensor FP8 (Llama 4 style: x and the weights in e4m3, one scale per expert, routing scales "
     "on the input): routing, FC1, gated activation, FC2, weighted top-k sum.",
     MoeFormat::fp8_per_tensor, MoeInputs::trtllm, "trtllm", false},
    {"trtllm_fp4_block_scale_moe", "testTrtllmFp4BlockScaleMoe",
     "MoE layer with NVFP4 weights and activations (16-blocks, e4m3 scales, global scales; the intermediate "
     "re-quantized to NVFP4): routing, FC1, gated activation, FC2, weighted top-k sum.",
     MoeFormat::nvfp4, MoeInputs::trtllm, "trtllm", false},
    {"cutlass_fused_moe", "testCutlassFusedMoe",
     "MoE layer as CUTLASS's fused MoE runs it (softmax top-k routing, TP/EP simulated on one GPU): base (16-bit) or "
     "fp8 (per-tensor) or nvfp4 variants.",
     MoeFormat::unquantized, MoeInputs::cutlass, "cutlass", false},
    {"cute_dsl_fp4_block_scale_moe", "testCuteDslFp4BlockScaleMoe",
     "NVFP4 MoE layer as the CuTe DSL MoE runs it (SwiGLU; the picks routed by softmax top-k outside the call): "
     "FC1, gated activation, FC2, weighted top-k sum.",
     MoeFormat::nvfp4, MoeInputs::cute_dsl, "cute-dsl", false},
    {"b12x_fused_moe", "testB12xFusedMoe",
     "MoE layer with NVFP4 weights as b12x's MoE runs it (bf16 x quantized to NVFP4 in the call, or w4a16; SwiGLU, "
     "tanh GeGLU or Relu2; the picks routed by softmax top-k outside the call): FC1, activation, FC2, weighted top-k "
     "sum.",
     MoeFormat::nvfp4, MoeInputs::b12x, "b12x", false},
}};

class FusedMoeRoutine final : public Routine {
 public:
  explicit FusedMoeRoutine(const MoeRoutineRow& row) : row_(row) {
    add_backend(make_moe_cuda_backend(std::string(row.backend_alias)));
    if (row.cutlass_baseline) {
      add_backend(vendor_backend<MoeCutlassBackend, CutlassLibrary>({"cutlass", "CUTLASS", "sm_90a"}));
    }
  }

  [[nodiscard]] std::string_view name() const override { return row_.name; }
  [[nodiscard]] std::string_view family() const override { return "moe"; }
  [[nodiscard]] std::string_view description() const override { return row_.description; }
  [[nodiscard]] std::string_view test_name() const override { return row_.test_name; }

  [[nodiscard]] std::vector<FlagSpec> flags() const override {
    // The reference's MoE parser: its routines share these flags.
    std::vector<std::string> methods;
    for (const auto& [name, method] : kRoutingMethods) methods.emplace_back(name);
    return {
        {"num_tokens", FlagKind::integer, std::nullopt, "Tokens T.", {}, true, ""},
        {"hidden_size", FlagKind::integer, std::nullopt, "Hidden size H (a multiple of 128).", {}, true, ""},
        {"intermediate_size", FlagKind::integer, std::nullopt,
         "Intermediate size I (FP8 block scales: a multiple of 128 on each rank).", {}, true, ""},
        {"num_experts", FlagKind::integer, std::nullopt, "Experts E (1 to 512).", {}, true, ""},
        {"top_k", FlagKind::integer, std::nullopt, "Experts per token k.", {}, true, ""},
        {"input_dtype", FlagKind::text, "bfloat16",
         "The hidden states' dtype before quantization (cutlass_fused_moe: bfloat16 or float16).", {}, false, ""},
        {"weight_dtype", FlagKind::text, "bfloat16", "Recorded only (the weights are in the routine's format).", {},
         false, ""},
        {"n_group", FlagKind::integer, std::nullopt, "deepseek_v3: expert groups (None or <= 0: none).", {}, false, ""},
        {"topk_group", FlagKind::integer, std::nullopt, "deepseek_v3: groups kept (None or <= 0: none).", {}, false,
         ""},
        {"routed_scaling_factor", FlagKind::real, "2.5", "deepseek_v3: the routing weights' factor.", {}, false, ""},
        {"local_expert_offset", FlagKind::integer, "0", "First expert of this rank (expert parallelism).", {}, false,
         ""},
        {"local_num_experts", FlagKind::integer, std::nullopt, "Experts of this rank (None: all).", {}, false, ""},
        {"routing_method", FlagKind::text, "deepseek_v3", "Routing method (trtllm_* routines).", methods, false, ""},
        {"use_shuffled_weight", FlagKind::boolean, "false", "Accepted, ignored (the reference's Blackwell layout).", {},
         false, ""},
        {"weight_layout", FlagKind::integer, "0", "Accepted, ignored (the reference's Blackwell layout).", {}, false,
         ""},
        {"use_routing_bias", FlagKind::boolean, "false", "deepseek_v3: a routing bias (the constant 0.1).", {}, false,
         ""},
        {"use_routing_scales_on_input", FlagKind::boolean, "false",
         "trtllm_fp8_per_tensor_scale_moe with llama4 routing: the pick's weight scales x, the sum adds with 1.", {},
         false, ""},
        {"activation-type", FlagKind::text, "Swiglu", "Swiglu or Geglu (b12x_fused_moe: also GegluTanh, Relu2).", {}, false,
         ""},
        {"fp4_mode", FlagKind::text, "nvfp4",
         "trtllm_fp4_block_scale_moe: nvfp4 (weights and x NVFP4), mxfp4_mxfp8 (MXFP4 weights, MXFP8 x) or "
         "mxfp4_bf16 (MXFP4 weights, bf16 x).",
         {"nvfp4", "mxfp4_mxfp8", "mxfp4_bf16"}, false, ""},
        {"cutlass_variant", FlagKind::text, "base", "cutlass_fused_moe: base (16-bit), fp8 or nvfp4.",
         {"base", "fp8", "nvfp4"}, false, ""},
        {"quantized_input", FlagKind::boolean, "false", "cutlass_fused_moe nvfp4: x quantized before the call.", {},
         false, ""},
        {"tp_size", FlagKind::integer, "1", "cutlass_fused_moe: tensor-parallel ranks (I sharded).", {}, false, ""},
        {"tp_rank", FlagKind::integer, "0", "cutlass_fused_moe: this rank's TP shard.", {}, false, ""},
        {"ep_size", FlagKind::integer, "1", "cutlass_fused_moe: expert-parallel ranks (E split).", {}, false, ""},
        {"ep_rank", FlagKind::integer, "0", "cutlass_fused_moe: this rank's experts.", {}, false, ""},
        {"use_functional_api", FlagKind::boolean, "false",
         "Accepted, ignored (cute_dsl / b12x: the reference's functional API over the same kernels).", {}, false, ""},
        {"b12x_quant_mode", FlagKind::text, "nvfp4",
         "b12x_fused_moe: nvfp4 (x quantized to NVFP4 in the call) or w4a16 (x and the intermediate 16-bit).",
         {"nvfp4", "w4a16"}, false, ""},
        {"rank", FlagKind::integer, "32", "Accepted, ignored (bgmv_moe's LoRA rank).", {}, false, ""},
        {"num_loras", FlagKind::integer, "8", "Accepted, ignored (bgmv_moe's LoRA adapters).", {}, false, ""},
        {"num_slices", FlagKind::integer, "1", "Accepted, ignored (bgmv_moe's weight slices).", {}, false, ""},
    };
  }

  [[nodiscard]] std::vector<std::pair<std::string, std::string>> renamed_flag_columns() const override {
    return {{"activation-type", "activation_type"}};
  }

  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"cuda"}; }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    MoeProblem p;
    p.format = row_.format;
    p.inputs = row_.inputs;
    p.tokens = positive_integer(args, "num_tokens");
    p.hidden = positive_integer(args, "hidden_size");
    p.full_intermediate = p.intermediate = positive_integer(args, "intermediate_size");
    if (p.hidden % kMoeScaleBlock != 0) {
      throw CaseError("--hidden_size " + std::to_string(p.hidden) +
                      " is not a multiple of 128 (kbench's gather and FP8 scales cover whole 128-blocks)");
    }
    moe::RoutingConfig& r = p.routing;
    r.experts = static_cast<int>(std::min<int64_t>(positive_integer(args, "num_experts"), 1 << 20));
    r.top_k = static_cast<int>(std::min<int64_t>(positive_integer(args, "top_k"), 1 << 20));
    const bool cutlass = row_.inputs == MoeInputs::cutlass;
    if (cutlass) {
      set_cutlass_layer(args, p);
    } else if (row_.inputs == MoeInputs::cute_dsl) {
      set_cute_dsl_layer(args, p);
    } else if (row_.inputs == MoeInputs::b12x) {
      set_b12x_layer(args, p);
    } else {
      set_trtllm_routing(args, p);
    }
    if (const std::string why = moe::routing_config_error(r); !why.empty()) {
      throw CaseError("routing " + std::string(routing_name(r.method)) + " with --num_experts " +
                      std::to_string(r.experts) + " --top_k " + std::to_string(r.top_k) + " --n_group " +
                      std::to_string(r.n_group) + " --topk_group " + std::to_string(r.topk_group) +
                      " and local experts [" + std::to_string(r.local_expert_offset) + ", " +
                      std::to_string(r.local_expert_offset + r.local_num_experts) + "): " + why);
    }
    if (p.format == MoeFormat::fp8_block_scale && p.intermediate % kMoeScaleBlock != 0) {
      throw CaseError("--intermediate_size " + std::to_string(p.intermediate) +
                      " is not a multiple of 128 (the FP8 block scales cover whole 128-blocks)");
    }
    if (p.fp4_weights() && p.intermediate % kMoeScaleBlock != 0) {
      throw CaseError("the intermediate size of a rank, " + std::to_string(p.intermediate) +
                      ", is not a multiple of 128 (FC2's k: kbench's GEMM expands FP4 weights 128 deep at a time)");
    }
    if (p.intermediate % 8 != 0) {
      throw CaseError("the intermediate size of a rank, " + std::to_string(p.intermediate) +
                      ", is not a multiple of 8 (the GEMMs' rows are whole 16-byte vectors)");
    }
    // (in doubles: the sizes are not bounded yet)
    const double rows = std::max(static_cast<double>(p.tokens) * r.top_k, static_cast<double>(r.local_num_experts));
    if (rows * std::max(static_cast<double>(p.hidden), 2.0 * static_cast<double>(p.intermediate)) > kMaxElements) {
      throw CaseError("--num_tokens x --top_k x --hidden_size / 2 --intermediate_size is over 2^40 elements");
    }
    const std::string& dtype = args.text("input_dtype");
    if (dtype == "bfloat16" || (cutlass && dtype == "float16")) {
      p.input_dtype = dtype == "float16" ? DType::float16 : DType::bfloat16;
    } else {
      throw CaseError("--input_dtype " + dtype + " is not supported by this routine (takes " +
                      (cutlass ? "bfloat16 or float16" : "bfloat16: the reference's hidden states are bfloat16") + ")");
    }
    if (cutlass) p.logits_dtype = p.input_dtype;  // trtllm's: set_trtllm_routing
    p.activation = row_.inputs == MoeInputs::b12x ? b12x_activation_flag(args) : activation_flag(args);
    ignore_unused_flags(args, p);
    return std::make_unique<MoeCase>(std::move(p));
  }

 private:
  // The trtllm_* routines: --routing_method with its groups, bias and scaling; the EP window from
  // --local_expert_offset / --local_num_experts; the logits' dtype the reference builds.
  void set_trtllm_routing(const CaseArgs& args, MoeProblem& p) const {
    moe::RoutingConfig& r = p.routing;
    const std::string& method = args.text("routing_method");
    r.method = std::find_if(kRoutingMethods.begin(), kRoutingMethods.end(), [&](const auto& m) {
                 return m.first == method;
               })->second;  // the flag's choices are kRoutingMethods' names
    r.n_group = optional_groups(args, "n_group");
    r.topk_group = optional_groups(args, "topk_group");
    r.routed_scaling_factor = static_cast<float>(args.real("routed_scaling_factor"));
    set_local_window(args, r);
    const bool deepseek = r.method == moe::RoutingMethod::deepseek_v3;
    const bool llama4 = r.method == moe::RoutingMethod::llama4;
    // The reference's logits: fp32 for deepseek_v3, else bf16; the per-tensor routine's the other way
    // round for llama4 (moe.md, input construction).
    p.logits_dtype = p.format == MoeFormat::fp8_per_tensor ? (llama4 ? DType::bfloat16 : DType::float32)
                                                           : (deepseek ? DType::float32 : DType::bfloat16);
    if (args.flag("use_routing_bias")) {
      if (deepseek) {
        p.routing_bias = true;
      } else {
        p.ignored_flags.emplace_back("use_routing_bias", "only deepseek_v3 routing reads a bias");
      }
    }
    if (args.flag("use_routing_scales_on_input")) {
      if (p.format != MoeFormat::fp8_per_tensor) {
        p.ignored_flags.emplace_back("use_routing_scales_on_input", "the reference does not pass it to this routine");
      } else if (!llama4 || r.top_k != 1) {
        throw CaseError("--use_routing_scales_on_input needs --routing_method llama4 and --top_k 1 (the weight "
                        "scales the token's one expert input)");
      } else {
        p.routing_scales_on_input = true;
      }
    }
    p.hidden_in_fp8 = p.format == MoeFormat::fp8_per_tensor;  // the reference casts x outside the call
    if (p.format == MoeFormat::nvfp4) {  // trtllm_fp4_block_scale_moe: the weights' and x's formats
      const std::string& mode = args.text("fp4_mode");
      p.format = mode == "mxfp4_mxfp8" ? MoeFormat::mxfp4_mxfp8
                 : mode == "mxfp4_bf16" ? MoeFormat::mxfp4_bf16
                                        : MoeFormat::nvfp4;
    }
    // x quantized outside the call (NVFP4 or MXFP8), as the reference passes it
    p.hidden_block_quantized = p.format == MoeFormat::nvfp4 || p.format == MoeFormat::mxfp4_mxfp8;
  }

  // The EP window: --local_expert_offset / --local_num_experts (None: every expert).
  static void set_local_window(const CaseArgs& args, moe::RoutingConfig& r) {
    r.local_expert_offset = static_cast<int>(std::clamp<int64_t>(args.integer("local_expert_offset"), -1, 1 << 20));
    r.local_num_experts = static_cast<int>(
        std::clamp<int64_t>(args.optional_integer("local_num_experts").value_or(r.experts), -1, 1 << 20));
    if (r.local_num_experts < 1) {
      throw CaseError("--local_num_experts must be positive, got " + args.display("local_num_experts"));
    }
  }

  // cute_dsl_fp4_block_scale_moe (the reference's _create_nvfp4_moe_test_data): fp32 logits routed
  // by softmax top-k, renormalized, outside the call (the wrapper takes the picks); x and the
  // weights NVFP4 under global scale 1; the EP window; SwiGLU only (the reference raises otherwise).
  static void set_cute_dsl_layer(const CaseArgs& args, MoeProblem& p) {
    moe::RoutingConfig& r = p.routing;
    r.method = moe::RoutingMethod::renormalize;
    set_local_window(args, r);
    p.logits_dtype = DType::float32;
    p.routing_in_call = false;
    p.hidden_block_quantized = true;
    if (activation_flag(args) != moe::GatedActivation::swiglu) {
      throw CaseError("cute_dsl_fp4_block_scale_moe runs SwiGLU only (the reference refuses other activations)");
    }
  }

  // b12x_fused_moe (the reference's _create_nvfp4_moe_test_data, backend b12x): as cute_dsl, but x
  // reaches the call in bf16, quantized to NVFP4 in it under global scale 1 (--b12x_quant_mode
  // nvfp4) or not at all (w4a16); its wrapper takes --local_num_experts but no expert offset.
  static void set_b12x_layer(const CaseArgs& args, MoeProblem& p) {
    moe::RoutingConfig& r = p.routing;
    r.method = moe::RoutingMethod::renormalize;
    r.local_num_experts = static_cast<int>(
        std::clamp<int64_t>(args.optional_integer("local_num_experts").value_or(r.experts), -1, 1 << 20));
    if (r.local_num_experts < 1) {
      throw CaseError("--local_num_experts must be positive, got " + args.display("local_num_experts"));
    }
    p.logits_dtype = DType::float32;
    p.routing_in_call = false;
    p.format = args.text("b12x_quant_mode") == "w4a16" ? MoeFormat::nvfp4_w4a16 : MoeFormat::nvfp4;
  }

  // cutlass_fused_moe: softmax top-k routing renormalized (the --routing_method flags do not apply),
  // the variant's format, and TP/EP simulated on one GPU: this rank's experts
  // [ep_rank E/ep, (ep_rank + 1) E/ep) and the I/tp shard of the intermediate.
  static void set_cutlass_layer(const CaseArgs& args, MoeProblem& p) {
    moe::RoutingConfig& r = p.routing;
    r.method = moe::RoutingMethod::renormalize;
    const std::string& variant = args.text("cutlass_variant");
    p.format = variant == "fp8" ? MoeFormat::fp8_per_tensor : variant == "nvfp4" ? MoeFormat::nvfp4 : MoeFormat::unquantized;
    const int64_t tp = positive_integer(args, "tp_size"), ep = positive_integer(args, "ep_size");
    const int64_t tp_rank = args.integer("tp_rank"), ep_rank = args.integer("ep_rank");
    if (tp_rank < 0 || tp_rank >= tp || ep_rank < 0 || ep_rank >= ep) {
      throw CaseError("--tp_rank " + std::to_string(tp_rank) + " / --ep_rank " + std::to_string(ep_rank) +
                      " must lie in [0, --tp_size " + std::to_string(tp) + ") / [0, --ep_size " + std::to_string(ep) +
                      ")");
    }
    if (r.experts % ep != 0 || p.intermediate % tp != 0) {
      throw CaseError("--ep_size " + std::to_string(ep) + " must divide --num_experts " + std::to_string(r.experts) +
                      " and --tp_size " + std::to_string(tp) + " must divide --intermediate_size " +
                      std::to_string(p.intermediate));
    }
    r.local_num_experts = static_cast<int>(r.experts / ep);
    r.local_expert_offset = static_cast<int>(ep_rank * r.local_num_experts);
    p.intermediate /= tp;  // the shard's values are drawn as they are: which rows of W31 they were is moot
    p.hidden_block_quantized = p.format == MoeFormat::nvfp4 && args.flag("quantized_input");
  }

  // Flags of the reference's other MoE routines, and layouts of its Blackwell kernels: warned about.
  void ignore_unused_flags(const CaseArgs& args, MoeProblem& p) const {
    const bool cutlass = row_.inputs == MoeInputs::cutlass;
    const bool b12x = row_.inputs == MoeInputs::b12x;
    const bool cute_dsl = row_.inputs == MoeInputs::cute_dsl || b12x;  // the CuTe DSL family's flags
    const bool fp4_routine = row_.inputs == MoeInputs::trtllm && row_.format == MoeFormat::nvfp4;
    const std::string layout =
        fp4_routine ? "the reference records it but never applies it to this routine's weights (never shuffled); "
                      "kbench's weights are K-major"
                    : "a weight layout of the reference's Blackwell kernels; kbench's weights are K-major";
    const std::string others = "a flag of the reference's other MoE routines";
    const std::string routing = "cutlass_fused_moe routes by softmax top-k, renormalized, whatever the flag says";
    std::vector<std::pair<const char*, std::string>> ignored = {
        {"use_shuffled_weight", cute_dsl ? others : layout},
        {"weight_layout", cute_dsl ? others : layout},
    };
    if (!b12x) ignored.emplace_back("b12x_quant_mode", others);
    for (const char* flag : {"rank", "num_loras", "num_slices"}) {
      ignored.emplace_back(flag, "a flag of bgmv_moe, which kbench does not run");
    }
    if (!fp4_routine) ignored.emplace_back("fp4_mode", others);
    ignored.emplace_back("use_functional_api",
                         cute_dsl ? "the reference's functional API runs the same kernels as its wrapper; kbench "
                                    "has one call"
                                  : others);
    if (cutlass) {
      for (const char* flag : {"routing_method", "n_group", "topk_group", "routed_scaling_factor", "use_routing_bias",
                               "use_routing_scales_on_input"}) {
        ignored.emplace_back(flag, routing);
      }
      for (const char* flag : {"local_expert_offset", "local_num_experts"}) {
        ignored.emplace_back(flag, "cutlass_fused_moe's experts come from --ep_size / --ep_rank");
      }
      if (p.format != MoeFormat::nvfp4) ignored.emplace_back("quantized_input", "it applies to --cutlass_variant nvfp4 only");
    } else if (cute_dsl) {
      for (const char* flag : {"routing_method", "n_group", "topk_group", "routed_scaling_factor", "use_routing_bias",
                               "use_routing_scales_on_input"}) {
        ignored.emplace_back(flag, std::string(name()) + "'s picks come from softmax top-k, renormalized, "
                                   "outside the call, whatever the flag says");
      }
      if (b12x) ignored.emplace_back("local_expert_offset", "b12x's wrapper takes no expert offset (it starts at 0)");
      for (const char* flag : {"cutlass_variant", "quantized_input", "tp_size", "tp_rank", "ep_size", "ep_rank"}) {
        ignored.emplace_back(flag, others);
      }
    } else {
      for (const char* flag : {"cutlass_variant", "quantized_input"}) ignored.emplace_back(flag, others);
      for (const char* flag : {"tp_size", "tp_rank", "ep_size", "ep_rank"}) {
        ignored.emplace_back(flag, others + " (cutlass_fused_moe's TP/EP simulation; use --local_expert_offset / "
                                            "--local_num_experts)");
      }
    }
    for (const auto& [flag, why] : ignored) {
      if (args.given(flag)) p.ignored_flags.emplace_back(flag, why);
    }
  }

  MoeRoutineRow row_;
};

}  // namespace

void register_moe_routines(RoutineRegistry& registry) {
  for (const MoeRoutineRow& row : kMoeRoutines) registry.add(std::make_unique<FusedMoeRoutine>(row));
}

}  // namespace kbench
