#include "routines/attention/attention_routines.hpp"

#include <algorithm>
#include <limits>

#include "routines/attention/cudnn_backends.hpp"
#include "routines/attention/decode_case.hpp"
#include "routines/attention/flashinfer_backends.hpp"
#include "routines/attention/kbench_backends.hpp"
#include "routines/attention/mla_case.hpp"
#include "routines/attention/prefill_case.hpp"
#include "routines/vendor_libraries.hpp"

namespace kbench {
namespace {

constexpr int64_t kMaxCacheElements = int64_t{1} << 40;

int positive(const CaseArgs& args, const char* flag) {
  const int64_t v = args.integer(flag);
  if (v <= 0 || v > (int64_t{1} << 30)) {
    throw CaseError(std::string("--") + flag + " must be in [1, 2^30], got " + std::to_string(v));
  }
  return static_cast<int>(v);
}

// The reference's attention parser, shared by every attention routine, plus kbench's layout and
// output dtype.
std::vector<FlagSpec> attention_flags() {
  const std::vector<std::string> data_dtypes = {"bfloat16", "float16", "fp8_e4m3", "fp8_e5m2"};
  std::vector<std::string> out_dtypes = data_dtypes;
  out_dtypes.push_back("nvfp4");
  return {
      {"page_size", FlagKind::integer, "0", "Tokens per KV page (paged routines: required).", {}, false, ""},
      {"batch_size", FlagKind::integer, std::nullopt, "Requests.", {}, true, ""},
      {"s_qo", FlagKind::integer, "1", "Query tokens per request (1 for decode; prefill: at most --s_kv).", {}, false, ""},
      {"s_kv", FlagKind::integer, std::nullopt, "KV tokens per request (the maximum with --random_actual_seq_len).", {}, true, ""},
      {"num_qo_heads", FlagKind::integer, std::nullopt, "Query heads.", {}, true, ""},
      {"num_kv_heads", FlagKind::integer, std::nullopt, "KV heads (divides --num_qo_heads).", {}, true, ""},
      {"head_dim_qk", FlagKind::integer, std::nullopt, "Head dimension of Q and K.", {}, true, ""},
      {"head_dim_vo", FlagKind::integer, std::nullopt, "Head dimension of V and the output.", {}, true, ""},
      {"head_dim_ckv", FlagKind::integer, std::nullopt, "MLA only; accepted for compatibility.", {}, false, ""},
      {"head_dim_kpe", FlagKind::integer, std::nullopt, "MLA only; accepted for compatibility.", {}, false, ""},
      {"q_dtype", FlagKind::text, "bfloat16", "Query dtype (fp8: per-tensor scale).", data_dtypes, false, ""},
      {"kv_dtype", FlagKind::text, "bfloat16", "KV cache dtype (fp8: per-tensor scales).", data_dtypes, false, ""},
      {"out_dtype", FlagKind::text, std::nullopt, "Output dtype (default: --q_dtype, bfloat16 for fp8 q).", out_dtypes, false, ""},
      {"kv_layout", FlagKind::text, "NHD", "Paged KV cache layout: NHD (token-major) or HND (head-major).", {"NHD", "HND"}, false, ""},
      {"causal", FlagKind::boolean, "false", "Causal mask, bottom-right aligned (prefill; decode attends to every KV token).", {}, false, ""},
      {"random_actual_seq_len", FlagKind::boolean, "false", "Lengths uniform in [1, --s_qo] and [1, --s_kv] instead of the maxima.", {}, false, ""},
  };
}

// FlashInfer's kernels as kbench builds them (cmake/KbenchFlashinfer.cmake).
constexpr const char* kFlashinferGpus = "sm_90a (as built; KBENCH_WITH_FLASHINFER=ON)";

class DecodeRoutine final : public Routine {
 public:
  DecodeRoutine() {
    add_backend(make_decode_kernel_backend(kernels::DecodeKernel::fa2));
    add_backend(make_decode_kernel_backend(kernels::DecodeKernel::fa2_tc));
    add_backend(vendor_backend<CudnnDecodeBackend, CudnnLibrary>({"cudnn", "cuDNN", "sm_80+, cuDNN >= 9.5"}));
    add_backend(vendor_backend<FlashinferDecodeBackend, FlashinferLibrary>(
        {"flashinfer_fa2",
         "FlashInfer",
         kFlashinferGpus,
         {{"flashinfer", "flashinfer is FlashInfer's default decode, its CUDA-core kernel (flashinfer_fa2); "
                         "flashinfer_fa2_tc is its tensor-core path"}}}));
    add_backend(vendor_backend<FlashinferDecodeBackend, FlashinferLibrary>(
        {"flashinfer_fa2_tc", "FlashInfer", kFlashinferGpus}));
  }
  [[nodiscard]] std::string_view name() const override { return "BatchDecodeWithPagedKVCacheWrapper"; }
  [[nodiscard]] std::string_view family() const override { return "attention"; }
  [[nodiscard]] std::string_view description() const override {
    return "Decode attention (one query token per request) on a paged KV cache.";
  }
  [[nodiscard]] std::string_view test_name() const override { return "testBatchDecodeWithPagedKVCacheWrapper"; }
  [[nodiscard]] std::vector<FlagSpec> flags() const override { return attention_flags(); }
  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"fa2"}; }
  // fa2_tc ran at least as fast as fa2 on every point of the attention grid, GQA 1 included (3-9%
  // faster there; bench/results/h100/attention_grid/session16/).
  [[nodiscard]] std::vector<std::string> auto_candidates(const Case&) const override { return {"fa2_tc", "fa2"}; }
  [[nodiscard]] std::string_view auto_rule() const override { return "fa2_tc where it takes the case, else fa2"; }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    DecodeProblem p;
    p.batch = positive(args, "batch_size");
    p.max_len = positive(args, "s_kv");
    p.num_qo_heads = positive(args, "num_qo_heads");
    p.num_kv_heads = positive(args, "num_kv_heads");
    p.head_dim = positive(args, "head_dim_qk");
    if (args.integer("s_qo") != 1) {
      throw CaseError("decode takes one query token per request: --s_qo must be 1, got " + args.display("s_qo"));
    }
    if (args.integer("head_dim_vo") != p.head_dim) {
      throw CaseError("decode needs --head_dim_vo equal to --head_dim_qk, got " + args.display("head_dim_vo") +
                      " and " + args.display("head_dim_qk"));
    }
    if (p.num_qo_heads % p.num_kv_heads != 0) {
      throw CaseError("--num_qo_heads " + std::to_string(p.num_qo_heads) + " is not a multiple of --num_kv_heads " +
                      std::to_string(p.num_kv_heads));
    }
    if (args.integer("page_size") < 1) {
      throw CaseError("--page_size is required for a paged KV cache (got " + args.display("page_size") + ")");
    }
    p.page_size = positive(args, "page_size");
    p.q_dtype = *parse_dtype(args.text("q_dtype"));
    p.kv_dtype = *parse_dtype(args.text("kv_dtype"));
    const std::string out = args.optional_text("out_dtype").value_or(is_fp8(p.q_dtype) ? "bfloat16" : args.text("q_dtype"));
    p.out_nvfp4 = out == "nvfp4";
    p.out_dtype = p.out_nvfp4 ? DType::bfloat16 : *parse_dtype(out);
    p.layout = args.text("kv_layout") == "HND" ? kernels::KvLayout::HND : kernels::KvLayout::NHD;
    p.enable_pdl = args.flag("enable_pdl");

    const double pages = static_cast<double>(p.batch) * ((p.max_len + p.page_size - 1) / p.page_size);
    if (pages * 2.0 * p.num_kv_heads * p.page_size * p.head_dim > static_cast<double>(kMaxCacheElements)) {
      throw CaseError("the KV cache of --batch_size " + std::to_string(p.batch) + " x --s_kv " +
                      std::to_string(p.max_len) + " is over 2^40 elements");
    }
    const auto seed = static_cast<uint64_t>(args.integer("random_seed"));
    const auto lens = make_sequence_lengths(p.batch, p.max_len, args.flag("random_actual_seq_len"), seed);
    p.pages = make_paged_kv_layout(lens, p.max_len, p.page_size, seed);
    return std::make_unique<DecodeCase>(std::move(p));
  }

  // seed 003's CSV: q_dtype, kv_cache_dtype, output_dtype (torch spellings), block_size,
  // num_kv_heads, head_size, max_seq_len.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> baseline_report(const CaseArgs& args) const override {
    const std::string q = args.text("q_dtype");
    const std::string out = args.optional_text("out_dtype").value_or(is_fp8(*parse_dtype(q)) ? "bfloat16" : q);
    const auto torch_name = [](const std::string& d) {
      return d == "nvfp4" ? std::string("nvfp4") : std::string(dtype_torch_name(*parse_dtype(d)));
    };
    return {{"q_dtype", torch_name(q)},
            {"kv_cache_dtype", torch_name(args.text("kv_dtype"))},
            {"output_dtype", torch_name(out)},
            {"block_size", args.display("page_size")},
            {"num_kv_heads", args.display("num_kv_heads")},
            {"head_size", args.display("head_dim_qk")},
            {"max_seq_len", args.display("s_kv")}};
  }
};

// BatchPrefillWithRaggedKVCacheWrapper and BatchPrefillWithPagedKVCacheWrapper: one routine, the KV
// kind aside.
class PrefillRoutine final : public Routine {
 public:
  explicit PrefillRoutine(bool paged) : paged_(paged) {
    add_backend(make_prefill_kernel_backend(kernels::PrefillKernel::fa2));
    add_backend(make_prefill_kernel_backend(kernels::PrefillKernel::fa3));
    add_backend(make_prefill_on_decode_backend());
    add_backend(vendor_backend<CudnnPrefillBackend, CudnnLibrary>(
        {"cudnn",
         "cuDNN",
         paged ? "sm_80+, cuDNN >= 9.7" : "sm_80+, cuDNN >= 9.0",
         {{"cudnn-native", "kbench runs cudnn-native as its cudnn backend (cuDNN's SDPA graph through "
                           "cudnn_frontend; the reference's wrapper and direct calls reach the same cuDNN kernels)"}}}));
    add_backend(vendor_backend<FlashinferPrefillBackend, FlashinferLibrary>(
        {"flashinfer_fa3",
         "FlashInfer",
         kFlashinferGpus,
         {{"flashinfer", "flashinfer is FlashInfer's Hopper prefill (flashinfer_fa3), what its backend=\"auto\" "
                         "picks on an H100; flashinfer_fa2 is its FlashAttention-2 kernel"}}}));
    add_backend(vendor_backend<FlashinferPrefillBackend, FlashinferLibrary>(
        {"flashinfer_fa2", "FlashInfer", kFlashinferGpus}));
  }

  [[nodiscard]] std::string_view name() const override {
    return paged_ ? "BatchPrefillWithPagedKVCacheWrapper" : "BatchPrefillWithRaggedKVCacheWrapper";
  }
  [[nodiscard]] std::string_view family() const override { return "attention"; }
  [[nodiscard]] std::string_view description() const override {
    return paged_ ? "Prefill attention (several query tokens per request) on a paged KV cache."
                  : "Prefill attention (several query tokens per request) on ragged K/V tensors.";
  }
  [[nodiscard]] std::string_view test_name() const override {
    return paged_ ? "testBatchPrefillWithPagedKVCacheWrapper" : "testBatchPrefillWithRaggedKVCacheWrapper";
  }
  [[nodiscard]] std::vector<FlagSpec> flags() const override { return attention_flags(); }
  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"fa2"}; }
  // The attention grid (bench/results/h100/attention_grid/session24/): fa3 first, ragged and on
  // every page size (1.5-1.7x fa2 on pages of 16 and 64; on pages of 1, 12 and 48, since its per-row
  // gather copies whole rows an instruction, 1.15-1.26x fa2, where session 16 measured it 13-15%
  // slower). One query token per request: the decode kernel (fa2_tc), which reads each kv head's
  // keys once for its whole query group (session 18's grid: 0.98x cuDNN where fa3 ran 0.40x).
  [[nodiscard]] std::vector<std::string> auto_candidates(const Case& problem) const override {
    const PrefillProblem& p = static_cast<const PrefillCase&>(problem).problem();
    std::vector<std::string> order{"fa3", "fa2"};
    if (p.one_query_token_each()) order.insert(order.begin(), "fa2_tc");
    return order;
  }
  [[nodiscard]] std::string_view auto_rule() const override {
    return "fa2_tc (the decode kernel) where every request has one query token; else fa3 where it takes the "
           "case, else fa2";
  }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    PrefillProblem p;
    p.paged = paged_;
    p.batch = positive(args, "batch_size");
    p.s_qo = positive(args, "s_qo");
    p.s_kv = positive(args, "s_kv");
    p.num_qo_heads = positive(args, "num_qo_heads");
    p.num_kv_heads = positive(args, "num_kv_heads");
    p.head_dim_qk = positive(args, "head_dim_qk");
    p.head_dim_vo = positive(args, "head_dim_vo");
    if (p.s_qo > p.s_kv) {
      throw CaseError("--s_qo " + std::to_string(p.s_qo) + " is larger than --s_kv " + std::to_string(p.s_kv) +
                      ": prefill queries are the last tokens of their KV sequence (the reference refuses "
                      "s_qo > s_kv too)");
    }
    if (p.num_qo_heads % p.num_kv_heads != 0) {
      throw CaseError("--num_qo_heads " + std::to_string(p.num_qo_heads) + " is not a multiple of --num_kv_heads " +
                      std::to_string(p.num_kv_heads));
    }
    const bool equal_dims = p.head_dim_qk == p.head_dim_vo &&
                            (p.head_dim_qk == 64 || p.head_dim_qk == 128 || p.head_dim_qk == 256);
    if (!equal_dims && !(p.head_dim_qk == 192 && p.head_dim_vo == 128)) {
      throw CaseError("--head_dim_qk " + std::to_string(p.head_dim_qk) + " with --head_dim_vo " +
                      std::to_string(p.head_dim_vo) + ": prefill takes 64/64, 128/128, 256/256 or 192/128");
    }
    if (paged_) {
      if (p.head_dim_qk != p.head_dim_vo) {
        throw CaseError("a paged KV cache holds K and V rows of one size: --head_dim_vo " +
                        std::to_string(p.head_dim_vo) + " must equal --head_dim_qk " + std::to_string(p.head_dim_qk) +
                        " (192/128 is a ragged-KV shape)");
      }
      if (args.integer("page_size") < 1) {
        throw CaseError("--page_size is required for a paged KV cache (got " + args.display("page_size") + ")");
      }
      p.page_size = positive(args, "page_size");
      p.layout = args.text("kv_layout") == "HND" ? kernels::KvLayout::HND : kernels::KvLayout::NHD;
    }
    p.q_dtype = *parse_dtype(args.text("q_dtype"));
    p.kv_dtype = *parse_dtype(args.text("kv_dtype"));
    const std::string out = args.optional_text("out_dtype").value_or(is_fp8(p.q_dtype) ? "bfloat16" : args.text("q_dtype"));
    if (out != "bfloat16" && out != "float16") {
      throw CaseError("prefill writes bfloat16 or float16 outputs: --out_dtype " + out + " is not supported");
    }
    p.out_dtype = *parse_dtype(out);
    p.causal = args.flag("causal");
    p.enable_pdl = args.flag("enable_pdl");

    // Token offsets are int32 (the kernels' and cuDNN's); every tensor stays under 2^40 elements.
    constexpr double kMaxTokens = std::numeric_limits<int32_t>::max();
    if (static_cast<double>(p.batch) * p.s_kv > kMaxTokens) {
      throw CaseError("--batch_size " + std::to_string(p.batch) + " x --s_kv " + std::to_string(p.s_kv) +
                      " is over 2^31 - 1 tokens");
    }
    const double kv_elements =
        paged_ ? static_cast<double>(p.batch) * ((p.s_kv + p.page_size - 1) / p.page_size) * p.page_size * 2.0 *
                     p.num_kv_heads * p.head_dim_qk
               : static_cast<double>(p.batch) * p.s_kv * p.num_kv_heads * (p.head_dim_qk + p.head_dim_vo);
    const double q_elements =
        static_cast<double>(p.batch) * p.s_qo * p.num_qo_heads * std::max(p.head_dim_qk, p.head_dim_vo);
    if (std::max(kv_elements, q_elements) > static_cast<double>(kMaxCacheElements)) {
      throw CaseError("the tensors of --batch_size " + std::to_string(p.batch) + " x --s_kv " +
                      std::to_string(p.s_kv) + " are over 2^40 elements");
    }

    const auto seed = static_cast<uint64_t>(args.integer("random_seed"));
    p.lens = make_prefill_lengths(p.batch, p.s_qo, p.s_kv, args.flag("random_actual_seq_len"), seed);
    p.qo_indptr = token_offsets(p.lens.q);
    p.kv_token_indptr = token_offsets(p.lens.kv);
    if (paged_) p.pages = make_paged_kv_layout(p.lens.kv, p.s_kv, p.page_size, seed);
    return std::make_unique<PrefillCase>(std::move(p));
  }

 private:
  bool paged_;
};

// The reference's attention parser as MLA reads it (mla.md): --head_dim_ckv and --head_dim_kpe
// required, --head_dim_qk/--head_dim_vo, --causal and --out_dtype ignored, no KV layout (the latent
// caches have one), and the flags of the trtllm-gen / cute-dsl MLA API.
std::vector<FlagSpec> mla_flags() {
  std::vector<FlagSpec> flags;
  for (FlagSpec f : attention_flags()) {
    if (f.name == "kv_layout") continue;
    if (f.name == "head_dim_qk" || f.name == "head_dim_vo") {
      f.required = false;
      f.help = "Ignored by MLA (its dims are --head_dim_ckv and --head_dim_kpe).";
    } else if (f.name == "head_dim_ckv") {
      f.required = true;
      f.help = "Latent (compressed KV) dim: the ckv cache rows, q_nope and the output (DeepSeek: 512).";
    } else if (f.name == "head_dim_kpe") {
      f.required = true;
      f.help = "Rope key dim: the kpe cache rows and q_pe (DeepSeek: 64).";
    } else if (f.name == "s_qo") {
      f.help = "Query tokens per request (multi-token prediction), causal among themselves.";
    } else if (f.name == "num_kv_heads") {
      f.help = "Required by the reference's parser; MLA's latent cache has no heads.";
    } else if (f.name == "q_dtype" || f.name == "kv_dtype") {
      f.help = f.name == "q_dtype" ? "Query dtype: bfloat16 or fp8_e4m3 (per-tensor scale)."
                                   : "Latent cache dtype: bfloat16 or fp8_e4m3 (per-tensor scales).";
    } else if (f.name == "out_dtype") {
      f.help = "Ignored by MLA: the output is --q_dtype (bfloat16 for fp8 queries).";
    } else if (f.name == "causal") {
      f.help = "Ignored: MLA decode is always causal among the query tokens.";
    }
    flags.push_back(std::move(f));
  }
  flags.push_back({"mla_is_var_seq", FlagKind::text, std::nullopt,
                   "trtllm-gen / cute-dsl only (auto: --random_actual_seq_len); accepted for compatibility.",
                   {"true", "false", "auto"}, false, ""});
  flags.push_back({"mla_cute_dsl_impl", FlagKind::text, std::nullopt, "cute-dsl only; accepted for compatibility.",
                   {"auto", "modular", "monolithic"}, false, ""});
  return flags;
}

DType mla_dtype(const CaseArgs& args, const char* flag) {
  const std::string& name = args.text(flag);
  if (name != "bfloat16" && name != "fp8_e4m3") {
    throw CaseError(std::string("--") + flag + " " + name + " is not supported by MLA: bfloat16 or fp8_e4m3");
  }
  return *parse_dtype(name);
}

// The reference kernel keeps a query row's latent accumulator in shared memory.
constexpr int kMaxMlaHeadDimCkv = 2048;
constexpr int kMaxMlaHeadDimKpe = 512;
constexpr int kMaxMlaHeads = 65535;  // the reference kernel's gridDim.y

class MlaRoutine final : public Routine {
 public:
  MlaRoutine() {
    add_backend(make_mla_kernel_backend(kernels::MlaKernel::fa2));
    add_backend(make_mla_kernel_backend(kernels::MlaKernel::fa3));
    add_backend(vendor_backend<FlashinferMlaBackend, FlashinferLibrary>(
        {"flashinfer_fa3",
         "FlashInfer",
         kFlashinferGpus,
         {{"flashinfer", "flashinfer is FlashInfer's Hopper MLA kernel (flashinfer_fa3), what its MLA wrapper's "
                         "backend=\"auto\" picks on an H100; flashinfer_fa2 is its generic MLA kernel"}}}));
    add_backend(vendor_backend<FlashinferMlaBackend, FlashinferLibrary>(
        {"flashinfer_fa2", "FlashInfer", kFlashinferGpus}));
  }
  [[nodiscard]] std::string_view name() const override { return "BatchMLAPagedAttentionWrapper"; }
  [[nodiscard]] std::string_view family() const override { return "attention"; }
  [[nodiscard]] std::string_view description() const override {
    return "Multi-head latent attention decode (DeepSeek MLA: 1+ query tokens per request) on a paged latent cache.";
  }
  [[nodiscard]] std::string_view test_name() const override { return "testBatchMLAPagedAttentionWrapper"; }
  [[nodiscard]] std::vector<FlagSpec> flags() const override { return mla_flags(); }
  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"fa2"}; }
  // bench/results/h100/attention/mla/session27/: fa3 is the faster kernel on every measured case,
  // bf16 and fp8 KV (1.02x to 2.6x fa2; with random lengths and 16 heads 1.13x since its balanced
  // schedule). fa2 takes what fa3 refuses (sm_80).
  [[nodiscard]] std::vector<std::string> auto_candidates(const Case&) const override { return {"fa3", "fa2"}; }
  [[nodiscard]] std::string_view auto_rule() const override { return "fa3 where it takes the case, else fa2"; }
  // mla.md: written to the reference's columns, and only when given (the flags have no default).
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> renamed_flag_columns() const override {
    return {{"mla_is_var_seq", "is_var_seq"}, {"mla_cute_dsl_impl", "cute_dsl_impl"}};
  }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    MlaProblem p;
    p.batch = positive(args, "batch_size");
    p.s_qo = positive(args, "s_qo");
    p.max_len = positive(args, "s_kv");
    p.num_heads = positive(args, "num_qo_heads");
    (void)positive(args, "num_kv_heads");  // the reference's parser requires it; MLA has no KV heads
    if (p.num_heads > kMaxMlaHeads) {
      throw CaseError("--num_qo_heads " + std::to_string(p.num_heads) + " is over MLA's " +
                      std::to_string(kMaxMlaHeads));
    }
    p.head_dim_ckv = positive(args, "head_dim_ckv");
    p.head_dim_kpe = positive(args, "head_dim_kpe");
    if (p.head_dim_ckv > kMaxMlaHeadDimCkv) {
      throw CaseError("--head_dim_ckv " + std::to_string(p.head_dim_ckv) + " is over " +
                      std::to_string(kMaxMlaHeadDimCkv));
    }
    if (p.head_dim_kpe > kMaxMlaHeadDimKpe) {
      throw CaseError("--head_dim_kpe " + std::to_string(p.head_dim_kpe) + " is over " +
                      std::to_string(kMaxMlaHeadDimKpe));
    }
    if (args.integer("page_size") < 1) {
      throw CaseError("--page_size is required for MLA's paged latent cache (got " + args.display("page_size") + ")");
    }
    p.page_size = positive(args, "page_size");
    if (p.s_qo > p.max_len) {
      throw CaseError("--s_qo " + std::to_string(p.s_qo) + " is larger than --s_kv " + std::to_string(p.max_len) +
                      ": the query tokens are the last tokens of their KV sequence");
    }
    p.q_dtype = mla_dtype(args, "q_dtype");
    p.kv_dtype = mla_dtype(args, "kv_dtype");
    p.out_dtype = is_fp8(p.q_dtype) ? DType::bfloat16 : p.q_dtype;

    // Cache rows are addressed in 32 bits by the kernels (page * page_size + slot); every tensor stays
    // under 2^40 elements.
    const double cache_tokens = static_cast<double>(p.batch) * ((p.max_len + p.page_size - 1) / p.page_size) * p.page_size;
    if (cache_tokens > static_cast<double>(std::numeric_limits<int32_t>::max())) {
      throw CaseError("the latent cache of --batch_size " + std::to_string(p.batch) + " x --s_kv " +
                      std::to_string(p.max_len) + " is over 2^31 - 1 tokens");
    }
    const double q_elements = static_cast<double>(p.batch) * p.s_qo * p.num_heads * p.head_dim_ckv;
    if (std::max(cache_tokens * p.head_dim_ckv, q_elements) > static_cast<double>(kMaxCacheElements)) {
      throw CaseError("the tensors of --batch_size " + std::to_string(p.batch) + " x --s_kv " +
                      std::to_string(p.max_len) + " are over 2^40 elements");
    }

    // mla.md: lengths as decode's, then raised to at least s_qo (every query token has its key).
    const auto seed = static_cast<uint64_t>(args.integer("random_seed"));
    auto lens = make_sequence_lengths(p.batch, p.max_len, args.flag("random_actual_seq_len"), seed);
    for (auto& len : lens) len = std::max(len, static_cast<int32_t>(p.s_qo));
    p.qo_indptr = token_offsets(std::vector<int32_t>(static_cast<std::size_t>(p.batch), p.s_qo));
    p.pages = make_paged_kv_layout(lens, p.max_len, p.page_size, seed);
    return std::make_unique<MlaCase>(std::move(p));
  }
};

}  // namespace

void register_attention_routines(RoutineRegistry& registry) {
  registry.add(std::make_unique<DecodeRoutine>());
  registry.add(std::make_unique<PrefillRoutine>(false));
  registry.add(std::make_unique<PrefillRoutine>(true));
  registry.add(std::make_unique<MlaRoutine>());
}

}  // namespace kbench
