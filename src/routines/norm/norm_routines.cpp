#include "routines/norm/norm_routines.hpp"

#include <cmath>
#include <limits>

#include "routines/norm/flashinfer_backends.hpp"
#include "routines/norm/kbench_backends.hpp"
#include "routines/norm/norm_case.hpp"
#include "routines/vendor_libraries.hpp"

namespace kbench {
namespace {

// Tensors beyond 2^40 elements are a typo, not a benchmark.

struct VariantInfo {
  NormVariant variant;
  const char* name;
  const char* test_name;
  const char* description;
};

constexpr VariantInfo kVariants[] = {
    {NormVariant::rmsnorm, "rmsnorm", "testRmsnorm", "RMSNorm: out = x / rms(x) * w."},
    {NormVariant::fused_add_rmsnorm, "fused_add_rmsnorm", "testFusedAddRmsnorm",
     "Residual add + RMSNorm, in place: r += x; x = r / rms(r) * w."},
    {NormVariant::gemma_rmsnorm, "gemma_rmsnorm", "testGemmaRmsnorm", "Gemma RMSNorm: out = x / rms(x) * (1 + w)."},
    {NormVariant::rmsnorm_quant, "rmsnorm_quant", "testRmsnormQuant",
     "RMSNorm with FP8 output: out = fp8(x / rms(x) * w * scale)."},
    {NormVariant::fused_add_rmsnorm_quant, "fused_add_rmsnorm_quant", "testFusedAddRmsnormQuant",
     "Residual add + RMSNorm with FP8 output: r += x; out = fp8(r / rms(r) * w * scale)."},
    {NormVariant::gemma_fused_add_rmsnorm, "gemma_fused_add_rmsnorm", "testGemmaFusedAddRmsnorm",
     "Gemma residual add + RMSNorm, in place: r += x; x = r / rms(r) * (1 + w)."},
    {NormVariant::fused_rmsnorm_silu, "fused_rmsnorm_silu", "testFusedRmsnormSilu",
     "RMSNorm + SiLU: out = silu(x / rms(x) * w), weight uniform in [0.5, 2)."},
    {NormVariant::layernorm_quant, "layernorm_quant", "testLayernormQuant",
     "LayerNorm with FP8 output: out = fp8(((x - mean) / std * gamma + beta) * scale), fp32 gamma and beta."},
    {NormVariant::rmsnorm_fp4quant, "rmsnorm_fp4quant", "testRmsnormFp4quant",
     "RMSNorm + FP4 block quantization (nvfp4: e4m3 scale per 16; mxfp4: ue8m0 scale per 32)."},
    {NormVariant::add_rmsnorm_fp4quant, "add_rmsnorm_fp4quant", "testAddRmsnormFp4quant",
     "Residual add + RMSNorm + FP4 block quantization: r += x; q, sf = fp4(r / rms(r) * w)."},
};

const BackendInfo kFlashinferNorm{"flashinfer", "FlashInfer", "sm_90a (as built; KBENCH_WITH_FLASHINFER=ON)"};

// FP8 output (--out_dtype fp8_e4m3 / fp8_e5m2, --scale).
bool is_quant(NormVariant v) {
  return v == NormVariant::rmsnorm_quant || v == NormVariant::fused_add_rmsnorm_quant || v == NormVariant::layernorm_quant;
}
bool is_fp4(NormVariant v) { return v == NormVariant::rmsnorm_fp4quant || v == NormVariant::add_rmsnorm_fp4quant; }

class NormRoutine final : public Routine {
 public:
  explicit NormRoutine(const VariantInfo& info) : info_(info) {
    add_backend(make_norm_cuda_backend());
    add_backend(vendor_backend<FlashinferNormBackend, FlashinferLibrary>(kFlashinferNorm));
  }

  [[nodiscard]] std::string_view name() const override { return info_.name; }
  [[nodiscard]] std::string_view family() const override { return "norm"; }
  [[nodiscard]] std::string_view description() const override { return info_.description; }
  [[nodiscard]] std::string_view test_name() const override { return info_.test_name; }

  [[nodiscard]] std::vector<FlagSpec> flags() const override {
    // The reference's norm parser: every norm routine accepts the same flags.
    const bool quant = is_quant(info_.variant);
    const bool fp4 = is_fp4(info_.variant);
    return {
        {"batch_size", FlagKind::integer, std::nullopt, "Batch size (rows).", {}, true, ""},
        {"hidden_size", FlagKind::integer, std::nullopt, "Hidden dimension (normalised).", {}, true, ""},
        {"num_heads", FlagKind::integer, std::nullopt, "Heads, for a 3-D input (batch, heads, hidden).", {}, false, ""},
        {"input_dtype", FlagKind::text, "bfloat16", "Input, residual and weight dtype.", {"bfloat16", "float16"}, false, ""},
        {"eps", FlagKind::real, "1e-06", "Epsilon added to the mean square.", {}, false, ""},
        {"scale", FlagKind::real, "1.0", quant ? "Multiplies the output before FP8 conversion." : "Quant routines only.", {}, false, ""},
        {"out_dtype", FlagKind::text, "fp8_e4m3",
         fp4     ? "FP4 format: nvfp4 or mxfp4 (fp8_e4m3, the default, means nvfp4, as in the reference)."
         : quant ? "FP8 output dtype."
                 : "Quant routines only (this routine writes --input_dtype).",
         {"fp8_e4m3", "fp8_e5m2", "nvfp4", "mxfp4"}, false, ""},
        {"use_global_scale", FlagKind::boolean, "false",
         fp4 ? "nvfp4: pass a global scale of 1.0 (the same as none)." : "FP4 routines only.", {}, false, ""},
        {"is_sf_swizzled_layout", FlagKind::boolean, "false",
         fp4 ? "Scale factors in the 128x4 layout (default linear)." : "FP4 routines only.", {}, false, ""},
        {"output_both_sf_layouts", FlagKind::boolean, "false",
         info_.variant == NormVariant::add_rmsnorm_fp4quant ? "Write the scale factors in both layouts (linear and 128x4)."
                                                            : "add_rmsnorm_fp4quant only.",
         {}, false, ""},
    };
  }

  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"cuda"}; }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    NormProblem p;
    p.variant = info_.variant;
    p.batch_size = positive_integer(args, "batch_size");
    p.hidden_size = positive_integer(args, "hidden_size");
    if (args.has("num_heads")) p.num_heads = positive_integer(args, "num_heads");
    const double rows = static_cast<double>(p.batch_size) * static_cast<double>(std::max<int64_t>(p.num_heads, 1));
    if (rows * static_cast<double>(p.hidden_size) > kMaxElements) {
      throw CaseError("--batch_size " + std::to_string(p.batch_size) +
                      (p.num_heads ? " x --num_heads " + std::to_string(p.num_heads) : std::string()) +
                      " x --hidden_size " + std::to_string(p.hidden_size) + " is over 2^40 elements");
    }
    if (p.hidden_size > std::numeric_limits<int32_t>::max()) {
      throw CaseError("--hidden_size " + std::to_string(p.hidden_size) + " is over 2^31 - 1");
    }
    p.input_dtype = *parse_dtype(args.text("input_dtype"));
    const double eps = args.real("eps");
    if (eps < 0) throw CaseError("--eps must be 0 or more, got " + args.display("eps"));
    // eps and scale are floats in the kernels: a larger value would become inf.
    if (eps > std::numeric_limits<float>::max()) throw CaseError("--eps " + args.display("eps") + " is beyond float's range");
    p.eps = static_cast<float>(eps);
    p.enable_pdl = args.flag("enable_pdl");
    if (is_quant(info_.variant)) {
      const std::string& out = args.text("out_dtype");
      const auto out_dtype = parse_dtype(out);
      if (!out_dtype || !is_fp8(*out_dtype)) {
        throw CaseError("--out_dtype " + out + " is an FP4 format: " + info_.name +
                        " writes fp8_e4m3 or fp8_e5m2 (FP4 outputs are the rmsnorm_fp4quant routines)");
      }
      p.out_dtype = *out_dtype;
      const double scale = args.real("scale");
      if (!(scale > 0)) throw CaseError("--scale must be positive, got " + args.display("scale"));
      if (scale > std::numeric_limits<float>::max() || static_cast<float>(scale) == 0.0f) {
        throw CaseError("--scale " + args.display("scale") + " is beyond float's range");
      }
      p.scale = static_cast<float>(scale);
    } else if (is_fp4(info_.variant)) {
      const std::string& out = args.text("out_dtype");
      if (out == "mxfp4") {
        p.fp4_format = kernels::quant::BlockFormat::mxfp4;
      } else if (out == "nvfp4" || out == "fp8_e4m3") {
        p.fp4_format = kernels::quant::BlockFormat::nvfp4;
      } else {
        throw CaseError("--out_dtype " + out + " is not an FP4 format: " + info_.name + " writes nvfp4 or mxfp4");
      }
      p.out_dtype = DType::uint8;
      if (p.hidden_size % p.fp4_block() != 0 || p.hidden_size < 64) {
        throw CaseError("--hidden_size " + std::to_string(p.hidden_size) + " must be at least 64 and a multiple of " +
                        std::to_string(p.fp4_block()) + " (the " + out + " scale block)");
      }
      p.use_global_scale = args.flag("use_global_scale");
      if (p.use_global_scale && p.fp4_format != kernels::quant::BlockFormat::nvfp4) p.ignored_flags.emplace_back("use_global_scale");
      p.sf_swizzled = args.flag("is_sf_swizzled_layout");
      if (info_.variant == NormVariant::add_rmsnorm_fp4quant) {
        p.both_sf_layouts = args.flag("output_both_sf_layouts");
      } else if (args.flag("output_both_sf_layouts")) {
        p.ignored_flags.emplace_back("output_both_sf_layouts");
      }
      if (args.given("scale")) p.ignored_flags.emplace_back("scale");
    } else {
      p.out_dtype = p.input_dtype;
      for (const char* flag : {"scale", "out_dtype"}) {
        if (args.given(flag)) p.ignored_flags.emplace_back(flag);
      }
    }
    if (!is_fp4(info_.variant)) {
      for (const char* flag : {"use_global_scale", "is_sf_swizzled_layout", "output_both_sf_layouts"}) {
        if (args.flag(flag)) p.ignored_flags.emplace_back(flag);
      }
    }
    return std::make_unique<NormCase>(std::move(p));
  }

 private:
  VariantInfo info_;
};

}  // namespace

void register_norm_routines(RoutineRegistry& registry) {
  for (const VariantInfo& info : kVariants) registry.add(std::make_unique<NormRoutine>(info));
}

}  // namespace kbench
