#include "routines/rope/rope_routines.hpp"

#include <limits>

#include "routines/rope/flashinfer_backends.hpp"
#include "routines/rope/kbench_backends.hpp"
#include "routines/vendor_libraries.hpp"
#include "routines/rope/rope_case.hpp"
#include "routines/rope/rope_quantize_case.hpp"

namespace kbench {
namespace {

// Tensors beyond 2^40 elements are a typo, not a benchmark.

const BackendInfo kFlashinferRope{"flashinfer", "FlashInfer", "sm_90a (as built; KBENCH_WITH_FLASHINFER=ON)"};

struct VariantInfo {
  RopeVariant variant;
  const char* name;
  const char* test_name;
  const char* description;
};

constexpr VariantInfo kVariants[] = {
    {RopeVariant::rope, "apply_rope", "testApplyRope",
     "RoPE of q and k, positions from request offsets (indptr, offsets)."},
    {RopeVariant::rope_pos_ids, "apply_rope_pos_ids", "testApplyRopePosIds", "RoPE of q and k, one int32 position per token."},
    {RopeVariant::llama31_rope, "apply_llama31_rope", "testApplyLlama31Rope",
     "RoPE with Llama 3.1's frequency scaling, positions from request offsets."},
    {RopeVariant::llama31_rope_pos_ids, "apply_llama31_rope_pos_ids", "testApplyLlama31RopePosIds",
     "RoPE with Llama 3.1's frequency scaling, one int32 position per token."},
    {RopeVariant::cos_sin_cache, "apply_rope_with_cos_sin_cache", "testApplyRopeWithCosSinCache",
     "RoPE from a float32 cos/sin cache (vLLM / SGLang style), int64 positions."},
    {RopeVariant::rope_quantize_fp8, "rope_quantize_fp8", "testRopeQuantizeFp8",
     "RoPE of q_rope and k_rope from a float32 cos/sin cache, rope and nope parts written in fp8."},
    {RopeVariant::mla_rope_quantize_fp8, "mla_rope_quantize_fp8", "testMlaRopeQuantizeFp8",
     "MLA form of rope_quantize_fp8: one latent k head; rope dim = head_dim - no_rope_dim."},
    {RopeVariant::rope_quantize_fp8_append_paged_kv_cache, "rope_quantize_fp8_append_paged_kv_cache",
     "testRopeQuantizeFp8AppendPagedKvCache",
     "rope_quantize_fp8 with K and V appended in fp8 to a paged KV cache (NHD or HND)."},
};

bool is_llama31(RopeVariant v) { return v == RopeVariant::llama31_rope || v == RopeVariant::llama31_rope_pos_ids; }

// A head count or dimension: positive and an int.
int positive_int(const CaseArgs& args, const char* flag) {
  const int64_t v = positive_integer(args, flag);
  if (v > std::numeric_limits<int>::max()) throw CaseError(std::string("--") + flag + " is too large: " + std::to_string(v));
  return static_cast<int>(v);
}

double positive_real(const CaseArgs& args, const char* flag) {
  const double v = args.real(flag);
  if (!(v > 0) || v > std::numeric_limits<float>::max()) {
    throw CaseError(std::string("--") + flag + " must be a positive float, got " + args.display(flag));
  }
  return v;
}

int non_negative_int(const CaseArgs& args, const char* flag) {
  const int64_t v = args.integer(flag);
  if (v < 0 || v > std::numeric_limits<int>::max()) {
    throw CaseError(std::string("--") + flag + " must be a non-negative int, got " + std::to_string(v));
  }
  return static_cast<int>(v);
}

// The FP8 routines' rope dim r and unrotated dims nd (shared/spec/rope.md): rope_quantize_fp8 takes
// r = --rotary_dim (default --head_dim) and nd = --no_rope_dim; the MLA form r = --head_dim -
// --no_rope_dim and one latent k head (--num_kv_heads unused); the paged append nd = --head_dim - r.
// kbench's kernel stores 16-byte fp8 vectors: r a multiple of 32 (NeoX halves of whole vectors) or
// of 16 (interleaved), nd a multiple of 16.
void quantized_dims(const CaseArgs& args, RopeProblem& p) {
  switch (p.variant) {
    case RopeVariant::mla_rope_quantize_fp8:
      p.no_rope_dim = non_negative_int(args, "no_rope_dim");
      if (p.no_rope_dim >= p.head_dim) {
        throw CaseError("--no_rope_dim must be below --head_dim (" + std::to_string(p.head_dim) + "), got " +
                        std::to_string(p.no_rope_dim));
      }
      p.rotary_dim = p.head_dim - p.no_rope_dim;
      p.k_heads = 1;
      if (args.has("rotary_dim")) p.ignored_flags.emplace_back("rotary_dim");
      break;
    case RopeVariant::rope_quantize_fp8_append_paged_kv_cache:
      p.rotary_dim = args.has("rotary_dim") ? positive_int(args, "rotary_dim") : p.head_dim;
      if (p.rotary_dim > p.head_dim) {
        throw CaseError("--rotary_dim must be at most --head_dim (" + std::to_string(p.head_dim) + "), got " +
                        std::to_string(p.rotary_dim));
      }
      p.no_rope_dim = p.head_dim - p.rotary_dim;
      if (args.given("no_rope_dim")) p.ignored_flags.emplace_back("no_rope_dim");
      break;
    default:
      p.rotary_dim = args.has("rotary_dim") ? positive_int(args, "rotary_dim") : p.head_dim;
      p.no_rope_dim = non_negative_int(args, "no_rope_dim");
      break;
  }
  const int multiple = p.interleave ? 16 : 32;
  if (p.rotary_dim % multiple != 0) {
    throw CaseError("the rope dim (" + std::string(p.variant == RopeVariant::mla_rope_quantize_fp8 ? "--head_dim - --no_rope_dim" : "--rotary_dim") +
                    ") must be a multiple of " + std::to_string(multiple) + (p.interleave ? " (interleaved)" : " (NeoX)") +
                    ", got " + std::to_string(p.rotary_dim));
  }
  if (p.no_rope_dim % 16 != 0) {
    throw CaseError("the unrotated dims (" +
                    std::string(p.variant == RopeVariant::rope_quantize_fp8_append_paged_kv_cache ? "--head_dim - --rotary_dim" : "--no_rope_dim") +
                    ") must be a multiple of 16, got " + std::to_string(p.no_rope_dim));
  }
}

class RopeRoutine final : public Routine {
 public:
  explicit RopeRoutine(const VariantInfo& info) : info_(info) {
    if (is_quantized(info.variant)) {
      add_backend(make_rope_quantize_cuda_backend());
      add_backend(vendor_backend<FlashinferRopeQuantizeBackend, FlashinferLibrary>(kFlashinferRope));
    } else {
      add_backend(make_rope_cuda_backend());
    }
  }

  [[nodiscard]] std::string_view name() const override { return info_.name; }
  [[nodiscard]] std::string_view family() const override { return "rope"; }
  [[nodiscard]] std::string_view description() const override { return info_.description; }
  [[nodiscard]] std::string_view test_name() const override { return info_.test_name; }

  [[nodiscard]] std::vector<FlagSpec> flags() const override {
    // The reference's RoPE parser: every RoPE routine accepts the same flags.
    return {
        {"batch_size", FlagKind::integer, std::nullopt, "Requests.", {}, true, ""},
        {"seq_len", FlagKind::integer, std::nullopt, "Tokens per request (positions 0 .. seq_len - 1).", {}, true, ""},
        {"num_qo_heads", FlagKind::integer, std::nullopt, "Query heads.", {}, true, ""},
        {"num_kv_heads", FlagKind::integer, std::nullopt, "Key heads.", {}, true, ""},
        {"head_dim", FlagKind::integer, std::nullopt, "Head dimension.", {}, true, ""},
        {"rotary_dim", FlagKind::integer, std::nullopt, "Rotated dimensions of each head (default: head_dim).", {}, false, ""},
        {"no_rope_dim", FlagKind::integer, "0", "FP8 routines: unrotated dimensions.", {}, false, ""},
        {"input_dtype", FlagKind::text, "float16", "Dtype of q and k.", {"float16", "bfloat16"}, false, ""},
        {"quant_dtype", FlagKind::text, "fp8_e4m3", "FP8 routines: output dtype.", {"fp8_e4m3", "fp8_e5m2"}, false, ""},
        {"rope_scale", FlagKind::real, "1.0", "Frequency divisor (Llama 3.1: of the long wavelengths).", {}, false, ""},
        {"rope_theta", FlagKind::real, "10000.0", "Frequency base theta (f_j = theta^(-2j/rotary_dim)).", {}, false, ""},
        {"interleave", FlagKind::boolean, "false", "Rotate pairs (2j, 2j+1) (GPT-J) instead of (j, j + rotary_dim/2) (NeoX).", {}, false, ""},
        {"page_size", FlagKind::integer, "16", "Paged KV routine: tokens per page.", {}, false, ""},
        {"kv_layout", FlagKind::text, "NHD", "Paged KV routine: cache layout.", {"NHD", "HND"}, false, ""},
        {"low_freq_factor", FlagKind::real, "1.0", "Llama 3.1: low frequency factor.", {}, false, ""},
        {"high_freq_factor", FlagKind::real, "4.0", "Llama 3.1: high frequency factor.", {}, false, ""},
        {"old_context_len", FlagKind::integer, "8192", "Llama 3.1: original context length.", {}, false, ""},
    };
  }

  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"cuda"}; }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    RopeProblem p;
    p.variant = info_.variant;
    p.batch_size = positive_integer(args, "batch_size");
    p.seq_len = positive_integer(args, "seq_len");
    p.q_heads = positive_int(args, "num_qo_heads");
    p.k_heads = positive_int(args, "num_kv_heads");
    p.head_dim = positive_int(args, "head_dim");
    p.interleave = args.flag("interleave");
    if (is_quantized(p.variant)) {
      quantized_dims(args, p);
    } else {
      p.rotary_dim = args.has("rotary_dim") ? positive_int(args, "rotary_dim") : p.head_dim;
      // kbench's kernel moves 16-byte vectors: whole vectors per head and per rotated half.
      if (p.head_dim % 8 != 0) throw CaseError("--head_dim must be a multiple of 8, got " + std::to_string(p.head_dim));
      if (p.rotary_dim % 16 != 0 || p.rotary_dim > p.head_dim) {
        throw CaseError("--rotary_dim must be a multiple of 16 and at most --head_dim (" + std::to_string(p.head_dim) +
                        "), got " + std::to_string(p.rotary_dim));
      }
    }
    if (static_cast<double>(p.batch_size) * static_cast<double>(p.seq_len) * (static_cast<double>(p.q_heads) + p.k_heads) * p.head_dim >
        kMaxElements) {
      throw CaseError("--batch_size x --seq_len x heads x --head_dim is over 2^40 elements");
    }
    // int32 positions and indptr.
    if (p.batch_size * p.seq_len > std::numeric_limits<int32_t>::max()) {
      throw CaseError("--batch_size x --seq_len is over 2^31 - 1 tokens");
    }
    p.dtype = *parse_dtype(args.text("input_dtype"));
    p.frequencies.theta = positive_real(args, "rope_theta");
    p.frequencies.scale = positive_real(args, "rope_scale");
    if (is_llama31(p.variant)) {
      p.frequencies.llama31 = true;
      p.frequencies.low_freq_factor = positive_real(args, "low_freq_factor");
      p.frequencies.high_freq_factor = positive_real(args, "high_freq_factor");
      p.frequencies.old_context_len = static_cast<double>(positive_integer(args, "old_context_len"));
      if (!(p.frequencies.high_freq_factor > p.frequencies.low_freq_factor)) {
        throw CaseError("--high_freq_factor must be above --low_freq_factor, got " + args.display("high_freq_factor") +
                        " and " + args.display("low_freq_factor"));
      }
    } else {
      for (const char* flag : {"low_freq_factor", "high_freq_factor", "old_context_len"}) {
        if (args.given(flag)) p.ignored_flags.emplace_back(flag);
      }
    }
    if (is_quantized(p.variant)) {
      p.quant_dtype = *parse_dtype(args.text("quant_dtype"));
      // The reference forwards --enable_pdl to its FP8 routines.
      p.enable_pdl = args.flag("enable_pdl");
      if (p.variant == RopeVariant::rope_quantize_fp8_append_paged_kv_cache) {
        p.page_size = positive_int(args, "page_size");
        p.hnd = args.text("kv_layout") == "HND";
        if (p.batch_size * p.pages_per_request() > std::numeric_limits<int32_t>::max()) {
          throw CaseError("--batch_size x ceil(--seq_len / --page_size) is over 2^31 - 1 pages");
        }
      } else {
        for (const char* flag : {"page_size", "kv_layout"}) {
          if (args.given(flag)) p.ignored_flags.emplace_back(flag);
        }
      }
      return std::make_unique<RopeQuantizeCase>(std::move(p));
    }
    for (const char* flag : {"no_rope_dim", "quant_dtype", "page_size", "kv_layout"}) {
      if (args.given(flag)) p.ignored_flags.emplace_back(flag);
    }
    // The reference forwards --enable_pdl only to its FP8 routines; the float ones warn and ignore it.
    if (args.flag("enable_pdl")) p.ignored_flags.emplace_back("enable_pdl");
    return std::make_unique<RopeCase>(std::move(p));
  }

 private:
  VariantInfo info_;
};

}  // namespace

void register_rope_routines(RoutineRegistry& registry) {
  for (const VariantInfo& info : kVariants) registry.add(std::make_unique<RopeRoutine>(info));
}

}  // namespace kbench
