#include "routines/gemm/gemm_routines.hpp"

#include "routines/gemm/cublas_backends.hpp"
#include "routines/gemm/cudnn_backends.hpp"
#include "routines/gemm/cutlass_backends.hpp"
#include "routines/gemm/gemm_case.hpp"
#include "routines/gemm/kbench_backends.hpp"
#include "routines/vendor_libraries.hpp"

namespace kbench {
namespace {

using kernels::gemm::ScaleMajor;

// Tensors beyond 2^40 elements are a typo, not a benchmark.

struct VariantInfo {
  GemmVariant variant;
  const char* name;
  const char* test_name;
  const char* description;
  // kbench's cuBLASLt backend under the reference's name for it ("cublaslt" for mm_bf16, else
  // "cublas"), or null where it has none; it is the default backend where there is one.
  const char* cublas_name;
  // Without one, the reference's default: kbench's backend of that name where it has one (the
  // group GEMM's cutlass), else such lines are skipped.
  const char* reference_default;
  bool cutlass = false;         // kbench's CUTLASS backend computes it (sm_90a builds)
  bool cudnn = false;           // kbench's cuDNN backend computes it (the reference's cudnn FP8 matmul)
  bool kbench_kernel = false;   // kbench's own kernel computes it (backend `cuda`, sm_90a)
  bool kbench_default = false;  // ... and is the default backend (where cuBLASLt refuses the routine on Hopper)
};

constexpr VariantInfo kVariants[] = {
    {.variant = GemmVariant::bmm_fp8, .name = "bmm_fp8", .test_name = "testBmmFp8",
     .description = "Batched FP8 GEMM with per-tensor scales: D = (sA A)(sB B)^T, bf16/fp16 out.",
     .cublas_name = "cublas", .reference_default = "cudnn", .cutlass = true, .cudnn = true, .kbench_kernel = true},
    {.variant = GemmVariant::gemm_fp8_nt_groupwise, .name = "gemm_fp8_nt_groupwise", .test_name = "testGemmFp8NtGroupwise",
     .description = "FP8 GEMM with DeepSeek block scales (A 1 x 128, B 128 x 128), D = A B^T.",
     .cublas_name = "cublas", .reference_default = "cudnn", .cutlass = true, .kbench_kernel = true,
     .kbench_default = true},
    {.variant = GemmVariant::group_gemm_fp8_nt_groupwise, .name = "group_gemm_fp8_nt_groupwise",
     .test_name = "testGroupGemmFp8NtGroupwise",
     .description = "Grouped FP8 GEMM with block scales: group_size groups of m rows, one B per group.",
     .cublas_name = nullptr, .reference_default = "cutlass", .cutlass = true, .kbench_kernel = true},
    {.variant = GemmVariant::mm_fp4, .name = "mm_fp4", .test_name = "testMmFp4",
     .description = "FP4 GEMM (NVFP4 with --use_nvfp4, else MXFP4), D = A B^T.", .cublas_name = nullptr,
     .reference_default = "cudnn", .kbench_kernel = true, .kbench_default = true},
    {.variant = GemmVariant::mm_fp8, .name = "mm_fp8", .test_name = "testMmFp8",
     .description = "FP8 GEMM with per-tensor scales, bf16 out.", .cublas_name = "cublas",
     .reference_default = "trtllm_low_latency", .cutlass = true, .kbench_kernel = true},
    {.variant = GemmVariant::mm_bf16, .name = "mm_bf16", .test_name = "testMmBf16",
     .description = "BF16 GEMM, optional bias: D = A B (+ bias).", .cublas_name = "cublaslt", .reference_default = "cudnn",
     .cutlass = true, .kbench_kernel = true},
    {.variant = GemmVariant::bmm_bf16, .name = "bmm_bf16", .test_name = "testBmmBf16",
     .description = "Batched BF16 GEMM: D = A B per batch.", .cublas_name = "cublas", .reference_default = "cudnn",
     .cutlass = true, .kbench_kernel = true},
};

DType dtype_flag(const CaseArgs& args, const char* flag, std::initializer_list<DType> allowed) {
  const std::string& text = args.text(flag);
  const std::optional<DType> dtype = parse_dtype(text);
  std::string names;
  for (const DType d : allowed) {
    if (dtype == d) return d;
    names += (names.empty() ? "" : ", ") + std::string(dtype_name(d));
  }
  throw CaseError("--" + std::string(flag) + " " + text + " is not supported by this routine (takes " + names + ")");
}

class GemmRoutine final : public Routine {
 public:
  explicit GemmRoutine(const VariantInfo& info) : info_(info) {
    if (info.kbench_kernel) add_backend(make_kbench_gemm_backend());
    if (info.cublas_name != nullptr) {
      const std::string name = info.cublas_name;
      const std::string other = name == "cublas" ? "cublaslt" : "cublas";
      add_backend(vendor_backend<CublasGemmBackend, CublasLibrary>(
          {name, "cuBLASLt", cublas_gpus(info.variant),
           {{other, other + " is kbench's cuBLASLt backend, which this routine calls " + name}}}));
    }
    if (info.cudnn) {
      add_backend(vendor_backend<CudnnGemmBackend, CudnnLibrary>({"cudnn", "cuDNN", "sm_89+ (cuDNN FP8 matmul)"}));
    }
    if (info.cutlass) {
      add_backend(vendor_backend<CutlassGemmBackend, CutlassLibrary>({"cutlass", "CUTLASS", "sm_90a"}));
    }
  }

  [[nodiscard]] std::string_view name() const override { return info_.name; }
  [[nodiscard]] std::string_view family() const override { return "gemm"; }
  [[nodiscard]] std::string_view description() const override { return info_.description; }
  [[nodiscard]] std::string_view test_name() const override { return info_.test_name; }

  [[nodiscard]] std::vector<FlagSpec> flags() const override {
    // The reference's GEMM parser: every GEMM routine accepts the same flags.
    return {
        {"batch_size", FlagKind::integer, "1", "Batch (bmm_fp8, bmm_bf16).", {}, false, ""},
        {"m", FlagKind::integer, std::nullopt, "Rows of A and D (per group for the group GEMM).", {}, true, ""},
        {"n", FlagKind::integer, std::nullopt,
         "Rows of B (columns of D). Groupwise: any n, B's last 128-row scale block partial (kbench's extension; the "
         "reference needs a multiple of 128).",
         {}, true, ""},
        {"k", FlagKind::integer, std::nullopt, "The contracted dimension.", {}, true, ""},
        {"tile_size", FlagKind::integer, "128", "Block scale tile of the groupwise GEMMs: only 128.", {}, false, ""},
        {"group_size", FlagKind::integer, "1", "Groups of the group GEMM.", {}, false, ""},
        {"scale_major_mode", FlagKind::text, "MN", "Groupwise scale layout: MN or K major.", {"MN", "K"}, false, ""},
        {"input_dtype", FlagKind::text, "fp8_e4m3", "A's dtype (bmm_fp8: fp8_e4m3 or fp8_e5m2).", {}, false, ""},
        {"mat2_dtype", FlagKind::text, "fp8_e4m3", "B's dtype (bmm_fp8: fp8_e4m3 or fp8_e5m2).", {}, false, ""},
        {"out_dtype", FlagKind::text, "bfloat16", "D's dtype.", {}, false, ""},
        {"mma_sm", FlagKind::integer, "1", "SMs per MMA (1 or 2; Blackwell's 2-SM MMA, accepted).", {}, false, ""},
        {"use_128x4_sf_layout", FlagKind::boolean, "false", "mm_fp4: A's scale factors in the 128x4 layout.", {}, false, ""},
        {"use_nvfp4", FlagKind::boolean, "false", "mm_fp4: NVFP4 (else MXFP4).", {}, false, ""},
        {"bias", FlagKind::boolean, "false", "mm_bf16: add a bfloat16 bias of n.", {}, false, ""},
    };
  }

  [[nodiscard]] std::vector<std::string> default_backends() const override {
    if (info_.kbench_default) return {"cuda"};
    return {info_.cublas_name != nullptr ? info_.cublas_name : info_.reference_default};
  }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    GemmProblem p;
    p.variant = info_.variant;
    p.m = positive_integer(args, "m");
    p.n = positive_integer(args, "n");
    p.k = positive_integer(args, "k");
    p.enable_pdl = args.flag("enable_pdl");
    const bool batched = p.variant == GemmVariant::bmm_fp8 || p.variant == GemmVariant::bmm_bf16;
    const bool group = p.variant == GemmVariant::group_gemm_fp8_nt_groupwise;
    if (batched) p.batch = positive_integer(args, "batch_size");
    if (group) p.batch = positive_integer(args, "group_size");
    if (p.variant == GemmVariant::mm_fp8 && args.integer("batch_size") != 1) {
      throw CaseError("--batch_size must be 1 for mm_fp8, got " + args.display("batch_size"));
    }
    if (!batched && p.variant != GemmVariant::mm_fp8 && args.given("batch_size")) p.ignored_flags.emplace_back("batch_size");
    if (!group && args.given("group_size")) p.ignored_flags.emplace_back("group_size");
    const double batch = static_cast<double>(p.batch);
    for (const auto& [rows, name] : {std::pair{p.m, "m"}, std::pair{p.n, "n"}}) {
      if (batch * static_cast<double>(rows) * static_cast<double>(p.k) > kMaxElements) {
        throw CaseError(std::string("--") + name + " " + std::to_string(rows) + " x --k " + std::to_string(p.k) +
                        (p.batch > 1 ? " x " + std::to_string(p.batch) + " matrices" : std::string()) +
                        " is over 2^40 elements");
      }
    }
    const int64_t mma_sm = args.integer("mma_sm");
    if (mma_sm != 1 && mma_sm != 2) throw CaseError("--mma_sm must be 1 or 2, got " + args.display("mma_sm"));
    p.mma_sm = static_cast<int>(mma_sm);

    switch (p.variant) {
      case GemmVariant::gemm_fp8_nt_groupwise:
      case GemmVariant::group_gemm_fp8_nt_groupwise: validate_groupwise(args, p); break;
      case GemmVariant::bmm_fp8:
        p.a_dtype = dtype_flag(args, "input_dtype", {DType::fp8_e4m3, DType::fp8_e5m2});
        p.b_dtype = dtype_flag(args, "mat2_dtype", {DType::fp8_e4m3, DType::fp8_e5m2});
        p.out_dtype = dtype_flag(args, "out_dtype", {DType::bfloat16, DType::float16});
        break;
      case GemmVariant::mm_fp8:
        p.a_dtype = dtype_flag(args, "input_dtype", {DType::fp8_e4m3});
        p.b_dtype = dtype_flag(args, "mat2_dtype", {DType::fp8_e4m3});
        p.out_dtype = dtype_flag(args, "out_dtype", {DType::bfloat16});
        break;
      case GemmVariant::mm_fp4: {
        p.a_dtype = p.b_dtype = DType::uint8;  // two e2m1 codes a byte
        p.out_dtype = dtype_flag(args, "out_dtype", {DType::bfloat16, DType::float16});
        p.use_nvfp4 = args.flag("use_nvfp4");
        p.use_128x4_sf_layout = args.flag("use_128x4_sf_layout");
        const int64_t block = p.use_nvfp4 ? 16 : 32;
        if (p.k % block != 0) {
          throw CaseError("--k " + std::to_string(p.k) + " is not a multiple of the " +
                          (p.use_nvfp4 ? "NVFP4" : "MXFP4") + " scale block (" + std::to_string(block) + ")");
        }
        ignore_if_given(args, p, {"input_dtype", "mat2_dtype"});
        break;
      }
      case GemmVariant::mm_bf16:
      case GemmVariant::bmm_bf16:
        p.a_dtype = p.b_dtype = DType::bfloat16;  // the reference draws bfloat16 whatever --input_dtype says
        p.out_dtype = dtype_flag(args, "out_dtype", {DType::bfloat16, DType::float16, DType::float32});
        p.bias = p.variant == GemmVariant::mm_bf16 && args.flag("bias");
        ignore_if_given(args, p, {"input_dtype", "mat2_dtype"});
        break;
    }
    if (!p.groupwise()) ignore_if_given(args, p, {"tile_size", "scale_major_mode"});
    if (p.variant != GemmVariant::mm_fp4) ignore_if_given(args, p, {"use_nvfp4", "use_128x4_sf_layout"});
    if (p.variant != GemmVariant::mm_bf16) ignore_if_given(args, p, {"bias"});
    return std::make_unique<GemmCase>(std::move(p));
  }

 private:
  static void ignore_if_given(const CaseArgs& args, GemmProblem& p, std::initializer_list<const char*> flags) {
    for (const char* flag : flags) {
      if (args.given(flag)) p.ignored_flags.emplace_back(flag);
    }
  }

  static void validate_groupwise(const CaseArgs& args, GemmProblem& p) {
    if (args.integer("tile_size") != kGemmTile) {
      throw CaseError("--tile_size " + args.display("tile_size") +
                      " is refused: only 128 is meaningful (the reference shapes its scales with --tile_size but calls "
                      "the GEMM with a fixed 1 x 128 / 128 x 128 scale granularity, so any other value computes wrong "
                      "results)");
    }
    p.tile = kGemmTile;
    // n need not be a multiple of 128 (kbench's extension: B's last scale block is partial, see
    // kernels/gemm/groupwise_fp8.hpp); k must, every scale block covering a whole tile of k.
    if (p.k % p.tile != 0) {
      throw CaseError("--k " + std::to_string(p.k) +
                      " is not a multiple of --tile_size 128 (the block scales cover whole tiles of k)");
    }
    p.major = args.text("scale_major_mode") == "K" ? ScaleMajor::k : ScaleMajor::mn;
    p.a_dtype = p.b_dtype = DType::fp8_e4m3;  // the reference quantizes to e4m3 whatever the dtype flags say
    p.out_dtype = dtype_flag(args, "out_dtype", {DType::bfloat16, DType::float16});
    ignore_if_given(args, p, {"input_dtype", "mat2_dtype"});
  }

  static std::string cublas_gpus(GemmVariant variant) {
    switch (variant) {
      case GemmVariant::gemm_fp8_nt_groupwise: return "sm_90 (cuBLAS 12.9+ block scaling)";
      case GemmVariant::bmm_fp8:
      case GemmVariant::mm_fp8: return "sm_89+";
      default: return "sm_80+";
    }
  }

  VariantInfo info_;
};

}  // namespace

void register_gemm_routines(RoutineRegistry& registry) {
  for (const VariantInfo& info : kVariants) registry.add(std::make_unique<GemmRoutine>(info));
}

}  // namespace kbench
