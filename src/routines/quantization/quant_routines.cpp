#include "routines/quantization/quant_routines.hpp"

#include <cmath>
#include <limits>

#include "routines/quantization/kbench_backends.hpp"
#include "routines/quantization/quant_case.hpp"

namespace kbench {
namespace {

using kernels::quant::SfLayout;

// Tensors beyond 2^40 elements are a typo, not a benchmark.

struct VariantInfo {
  QuantVariant variant;
  const char* name;
  const char* test_name;
  const char* description;
};

constexpr VariantInfo kVariants[] = {
    {QuantVariant::mxfp8, "mxfp8_quantize", "testMxfp8Quantize",
     "MXFP8: e4m3 elements, one ue8m0 scale per 32 (scale 2^ceil(log2(amax / 448)))."},
    {QuantVariant::mxfp4, "mxfp4_quantize", "testMxfp4Quantize",
     "MXFP4: e2m1 elements, one ue8m0 scale per 32 (scale 2^ceil(log2(amax / 6)))."},
    {QuantVariant::nvfp4, "nvfp4_quantize", "testNvfp4Quantize",
     "NVFP4: e2m1 elements, one e4m3 scale per 16 or 32 (e4m3(g * amax / 6)), global scale g."},
    {QuantVariant::nvfp4_batched, "nvfp4_batched_quantize", "testNvfp4BatchedQuantize",
     "NVFP4 of a batch of matrices, scales per matrix in the 128x4 layout."},
};

SfLayout parse_layout(const std::string& name) {
  if (name == "linear") return SfLayout::linear;
  return name == "8x4" ? SfLayout::swizzled_8x4 : SfLayout::swizzled_128x4;
}

class QuantRoutine final : public Routine {
 public:
  explicit QuantRoutine(const VariantInfo& info) : info_(info) { add_backend(make_quant_cuda_backend()); }

  [[nodiscard]] std::string_view name() const override { return info_.name; }
  [[nodiscard]] std::string_view family() const override { return "quantization"; }
  [[nodiscard]] std::string_view description() const override { return info_.description; }
  [[nodiscard]] std::string_view test_name() const override { return info_.test_name; }

  [[nodiscard]] std::vector<FlagSpec> flags() const override {
    // The reference's quantization parser: every quantization routine accepts the same flags.
    return {
        {"m", FlagKind::integer, std::nullopt, "Rows.", {}, true, ""},
        {"k", FlagKind::integer, std::nullopt, "Columns (quantized in blocks along k).", {}, true, ""},
        {"batch_size", FlagKind::integer, std::nullopt, "Matrices (nvfp4_batched_quantize).", {}, false, ""},
        {"input_dtype", FlagKind::text, "bfloat16", "Input dtype.", {"bfloat16", "float16"}, false, ""},
        {"is_sf_swizzled_layout", FlagKind::boolean, "true", "mxfp8: scales in the 128x4 layout (default).", {}, false, ""},
        {"no_sf_swizzled_layout", FlagKind::boolean, "false", "mxfp8: scales row-major (linear).", {}, false, ""},
        {"alignment", FlagKind::integer, "32", "mxfp8: columns padded to a multiple of this (of 32).", {}, false, ""},
        {"global_scale", FlagKind::real, "1.0", "nvfp4: global scale g (scale = e4m3(g * amax / 6)).", {}, false, ""},
        {"sf_layout", FlagKind::text, "128x4", "mxfp4 / nvfp4: scale layout.", {"128x4", "8x4", "linear"}, false, ""},
        {"do_shuffle", FlagKind::boolean, "false", "nvfp4: rows permuted in blocks of 32 (TRT-LLM weight layout).", {}, false, ""},
        {"sf_vec_size", FlagKind::integer, "16", "nvfp4: elements per scale, 16 or 32.", {}, false, ""},
        {"per_token_activation", FlagKind::boolean, "false", "nvfp4: a global scale per row, written as fp32.", {}, false, ""},
    };
  }

  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"cuda"}; }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    QuantProblem p;
    p.variant = info_.variant;
    const bool batched = p.variant == QuantVariant::nvfp4_batched;
    const bool nvfp4 = p.variant == QuantVariant::nvfp4 || batched;
    p.m = positive_integer(args, "m");
    p.k = positive_integer(args, "k");
    if (batched) {
      if (!args.has("batch_size")) throw CaseError("--batch_size is required by nvfp4_batched_quantize");
      p.batch_size = positive_integer(args, "batch_size");
    } else if (args.given("batch_size")) {
      p.ignored_flags.emplace_back("batch_size");
    }
    if (static_cast<double>(p.batch_size) * static_cast<double>(p.m) * static_cast<double>(p.k) >
        kMaxElements) {
      throw CaseError("--m " + std::to_string(p.m) + " x --k " + std::to_string(p.k) +
                      (batched ? " x --batch_size " + std::to_string(p.batch_size) : std::string()) +
                      " is over 2^40 elements");
    }
    p.input_dtype = *parse_dtype(args.text("input_dtype"));
    p.enable_pdl = args.flag("enable_pdl");
    p.sf_vec_size = nvfp4 ? static_cast<int>(args.integer("sf_vec_size")) : 32;
    if (nvfp4 && p.sf_vec_size != 16 && p.sf_vec_size != 32) {
      throw CaseError("--sf_vec_size must be 16 or 32, got " + args.display("sf_vec_size"));
    }
    if (p.k % p.sf_vec_size != 0) {
      throw CaseError("--k " + std::to_string(p.k) + " is not a multiple of the scale block (" +
                      std::to_string(p.sf_vec_size) + ")");
    }
    switch (p.variant) {
      case QuantVariant::mxfp8:
        p.alignment = args.integer("alignment");
        if (p.alignment <= 0 || p.alignment % 32 != 0) {
          throw CaseError("--alignment must be a positive multiple of 32, got " + args.display("alignment"));
        }
        // --is_sf_swizzled_layout is the default (store_true of an on switch); only --no_ turns it off.
        p.layout = args.flag("no_sf_swizzled_layout") ? SfLayout::linear : SfLayout::swizzled_128x4;
        break;
      case QuantVariant::mxfp4:
      case QuantVariant::nvfp4: p.layout = parse_layout(args.text("sf_layout")); break;
      case QuantVariant::nvfp4_batched:
        p.layout = SfLayout::swizzled_128x4;
        if (args.given("sf_layout") && args.text("sf_layout") != "128x4") p.ignored_flags.emplace_back("sf_layout");
        break;
    }
    if (nvfp4) {
      const double g = args.real("global_scale");
      if (!(g > 0) || g > std::numeric_limits<float>::max() || static_cast<float>(g) == 0.0f) {
        throw CaseError("--global_scale must be a positive float, got " + args.display("global_scale"));
      }
      p.global_scale = static_cast<float>(g);
    }
    if (p.variant == QuantVariant::nvfp4) {
      p.do_shuffle = args.flag("do_shuffle");
      p.per_token = args.flag("per_token_activation");
      if (p.do_shuffle && p.layout != SfLayout::swizzled_128x4) {
        throw CaseError("--do_shuffle needs --sf_layout 128x4 (the shuffled scales are 128x4 tiles)");
      }
      if (p.do_shuffle && p.m % 128 != 0) {
        throw CaseError("--do_shuffle needs --m a multiple of 128, got " + std::to_string(p.m));
      }
      if (p.per_token && args.given("global_scale")) p.ignored_flags.emplace_back("global_scale");
    }
    for (const char* flag : {"do_shuffle", "per_token_activation"}) {
      if (p.variant != QuantVariant::nvfp4 && args.flag(flag)) p.ignored_flags.emplace_back(flag);
    }
    if (!nvfp4) {
      for (const char* flag : {"global_scale", "sf_vec_size"}) {
        if (args.given(flag)) p.ignored_flags.emplace_back(flag);
      }
    }
    if (p.variant != QuantVariant::mxfp8 && args.given("alignment")) p.ignored_flags.emplace_back("alignment");
    if (p.variant == QuantVariant::mxfp8 && args.given("sf_layout")) p.ignored_flags.emplace_back("sf_layout");
    return std::make_unique<QuantCase>(std::move(p));
  }

 private:
  VariantInfo info_;
};

}  // namespace

void register_quant_routines(RoutineRegistry& registry) {
  for (const VariantInfo& info : kVariants) registry.add(std::make_unique<QuantRoutine>(info));
}

}  // namespace kbench
