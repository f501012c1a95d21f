#include "routines/sampling/sampling_routines.hpp"

#include <algorithm>
#include <limits>

#include "routines/sampling/flashinfer_backends.hpp"
#include "routines/sampling/kbench_backends.hpp"
#include "routines/sampling/sampling_case.hpp"
#include "routines/vendor_libraries.hpp"

namespace kbench {
namespace {

// Tensors beyond 2^40 elements are a typo, not a benchmark.

struct RoutineInfo {
  SamplingOp op;
  const char* name;
  const char* test_name;
  const char* description;
};

constexpr RoutineInfo kRoutines[] = {
    {SamplingOp::softmax, "softmax", "testSoftmax", "Softmax with temperature: probs = softmax(logits / T), float32."},
    {SamplingOp::sampling_from_probs, "sampling_from_probs", "testSamplingFromProbs",
     "One draw per row from probabilities."},
    {SamplingOp::sampling_from_logits, "sampling_from_logits", "testSamplingFromLogits",
     "One draw per row from softmax(logits) (--temperature not applied, as the reference)."},
    {SamplingOp::top_k_sampling_from_probs, "top_k_sampling_from_probs", "testTopKSamplingFromProbs",
     "One draw per row from the k largest probabilities, renormalised."},
    {SamplingOp::top_p_sampling_from_probs, "top_p_sampling_from_probs", "testTopPSamplingFromProbs",
     "One draw per row from the smallest top set of mass >= top_p (nucleus)."},
    {SamplingOp::top_k_top_p_sampling_from_probs, "top_k_top_p_sampling_from_probs", "testTopKTopPSamplingFromProbs",
     "Top-k then top-p (or both jointly: --filter_apply_order joint), one draw per row."},
    {SamplingOp::top_k_top_p_sampling_from_logits, "top_k_top_p_sampling_from_logits", "testTopKTopPSamplingFromLogits",
     "Top-k and top-p sampling from softmax(logits)."},
    {SamplingOp::min_p_sampling_from_probs, "min_p_sampling_from_probs", "testMinPSamplingFromProbs",
     "One draw per row among probabilities >= min_p * the largest."},
    {SamplingOp::top_k_renorm_probs, "top_k_renorm_probs", "testTopKRenormProbs",
     "Keep the k largest probabilities, zero the rest, renormalise."},
    {SamplingOp::top_p_renorm_probs, "top_p_renorm_probs", "testTopPRenormProbs",
     "Keep the nucleus of mass top_p, zero the rest, renormalise (float32)."},
    {SamplingOp::top_k_mask_logits, "top_k_mask_logits", "testTopKMaskLogits",
     "Keep the k largest logits, set the rest to -inf."},
    {SamplingOp::chain_speculative_sampling, "chain_speculative_sampling", "testChainSpeculativeSampling",
     "Chain speculative sampling: accept draft tokens, draw the first rejected one's replacement."},
    {SamplingOp::top_k, "top_k", "testTopK", "Radix top-k: the k largest values and their int64 indices, unsorted."},
    {SamplingOp::top_k_page_table_transform, "top_k_page_table_transform", "testTopKPageTableTransform",
     "Top-k of each row's scores, mapped through the row's page table."},
    {SamplingOp::top_k_ragged_transform, "top_k_ragged_transform", "testTopKRaggedTransform",
     "Top-k of each row's scores, plus the row's offset."},
};

const BackendInfo kFlashinferSampling{"flashinfer", "FlashInfer", "sm_90a (as built; KBENCH_WITH_FLASHINFER=ON)"};

// The flags each routine reads (beyond --batch_size, --vocab_size / --max_len and --distribution):
// a given flag outside its set is said to be ignored.
bool reads_flag(SamplingOp op, std::string_view flag) {
  const bool logits_dtype = reads_logits(op) || op == SamplingOp::top_k_renorm_probs || op == SamplingOp::top_k ||
                            is_transform(op);
  if (flag == "input_dtype") return logits_dtype;
  if (flag == "temperature") return op == SamplingOp::softmax;
  if (flag == "top_k") {
    return op == SamplingOp::top_k_sampling_from_probs || op == SamplingOp::top_k_top_p_sampling_from_probs ||
           op == SamplingOp::top_k_top_p_sampling_from_logits || op == SamplingOp::top_k_renorm_probs ||
           op == SamplingOp::top_k_mask_logits || op == SamplingOp::top_k || is_transform(op);
  }
  if (flag == "top_p") {
    return op == SamplingOp::top_p_sampling_from_probs || op == SamplingOp::top_k_top_p_sampling_from_probs ||
           op == SamplingOp::top_k_top_p_sampling_from_logits || op == SamplingOp::top_p_renorm_probs;
  }
  if (flag == "filter_apply_order") {
    return op == SamplingOp::top_k_top_p_sampling_from_probs || op == SamplingOp::top_k_top_p_sampling_from_logits;
  }
  if (flag == "min_p") return op == SamplingOp::min_p_sampling_from_probs;
  if (flag == "num_speculate_tokens") return op == SamplingOp::chain_speculative_sampling;
  if (flag == "max_len" || flag == "num_rows") return is_transform(op);
  if (flag == "vocab_size") return !is_transform(op);
  return true;
}

class SamplingRoutine final : public Routine {
 public:
  explicit SamplingRoutine(const RoutineInfo& info) : info_(info) {
    add_backend(make_sampling_cuda_backend());
    if (filters_by_sorting(info.op)) add_backend(make_sampling_cub_backend());
    add_backend(vendor_backend<FlashinferSamplingBackend, FlashinferLibrary>(kFlashinferSampling));
  }

  [[nodiscard]] std::string_view name() const override { return info_.name; }
  [[nodiscard]] std::string_view family() const override { return "sampling"; }
  [[nodiscard]] std::string_view description() const override { return info_.description; }
  [[nodiscard]] std::string_view test_name() const override { return info_.test_name; }
  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"cuda"}; }

  [[nodiscard]] std::vector<FlagSpec> flags() const override {
    // The reference's sampling parser: every sampling routine accepts the same flags; --vocab_size
    // is required except by the transforms (which use --max_len). --distribution is kbench's.
    return {
        {"batch_size", FlagKind::integer, std::nullopt, "Batch size.", {}, true, ""},
        {"vocab_size", FlagKind::integer, std::nullopt, "Vocabulary size.", {}, !is_transform(info_.op), ""},
        {"input_dtype", FlagKind::text, "float32",
         "Data type of the input tensor (the probabilities routines always take float32).",
         {"float32", "float16", "bfloat16"}, false, ""},
        {"top_k", FlagKind::integer, "50", "Top-K value for top-k sampling.", {}, false, ""},
        {"top_p", FlagKind::real, "0.9", "Top-P threshold for top-p sampling.", {}, false, ""},
        {"min_p", FlagKind::real, "0.1", "Min-P threshold for min-p sampling.", {}, false, ""},
        {"temperature", FlagKind::real, "1.0", "Temperature for softmax.", {}, false, ""},
        {"filter_apply_order", FlagKind::text, "top_k_first", "Order of applying top-k and top-p filters.",
         {"top_k_first", "joint"}, false, ""},
        {"num_speculate_tokens", FlagKind::integer, "5", "Number of speculative tokens for chain speculative sampling.",
         {}, false, ""},
        {"max_len", FlagKind::integer, "4096",
         "Max sequence length for top_k_page_table_transform and top_k_ragged_transform.", {}, false, ""},
        {"num_rows", FlagKind::integer, std::nullopt,
         "Number of rows for top_k_page_table_transform and top_k_ragged_transform. Defaults to batch_size.", {},
         false, ""},
        {"distribution", FlagKind::text, "flat",
         "kbench: the random inputs' law: flat (the reference's: uniform probabilities, N(0,1) logits) or peaked "
         "(Zipf's law j^-1.5 over the vocabulary: top-p 0.9 keeps ~56 tokens).",
         {"flat", "peaked"}, false, ""},
    };
  }

  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    SamplingProblem p;
    p.op = info_.op;
    p.batch_size = positive_integer(args, "batch_size");
    if (is_transform(p.op)) {
      p.vocab_size = positive_integer(args, "max_len");
      p.num_rows = args.has("num_rows") ? positive_integer(args, "num_rows") : p.batch_size;
      if (p.op == SamplingOp::top_k_page_table_transform && p.num_rows > p.batch_size) {
        throw CaseError("--num_rows " + std::to_string(p.num_rows) + " is more than --batch_size " +
                        std::to_string(p.batch_size) + ": row r of the scores reads row r of the page table");
      }
    } else {
      p.vocab_size = positive_integer(args, "vocab_size");
      p.num_rows = p.batch_size;
    }
    const char* length_flag = is_transform(p.op) ? "--max_len" : "--vocab_size";
    if (p.vocab_size > std::numeric_limits<int32_t>::max()) {
      throw CaseError(std::string(length_flag) + " " + std::to_string(p.vocab_size) + " is over 2^31 - 1");
    }
    p.num_speculate_tokens = positive_integer(args, "num_speculate_tokens");
    if (p.num_speculate_tokens > std::numeric_limits<int32_t>::max()) {
      throw CaseError("--num_speculate_tokens " + std::to_string(p.num_speculate_tokens) + " is over 2^31 - 1");
    }
    const double rows = static_cast<double>(p.rows()) * (p.op == SamplingOp::chain_speculative_sampling
                                                             ? static_cast<double>(p.num_speculate_tokens + 1)
                                                             : 1.0);
    if (rows * static_cast<double>(p.vocab_size) > kMaxElements) {
      throw CaseError("--batch_size " + std::to_string(p.batch_size) + " x " + length_flag + " " +
                      std::to_string(p.vocab_size) + " is over 2^40 elements");
    }
    p.input_dtype = reads_probs(p.op) ? DType::float32 : *parse_dtype(args.text("input_dtype"));
    p.top_k = args.integer("top_k");
    if (reads_flag(p.op, "top_k") && (p.top_k < 1 || p.top_k > p.vocab_size)) {
      throw CaseError("--top_k must be in [1, " + std::to_string(p.vocab_size) + "] (" + length_flag + "), got " +
                      std::to_string(p.top_k));
    }
    p.top_p = args.real("top_p");
    if (reads_flag(p.op, "top_p") && !(p.top_p > 0.0 && p.top_p <= 1.0)) {
      throw CaseError("--top_p must be in (0, 1], got " + args.display("top_p"));
    }
    p.min_p = args.real("min_p");
    if (reads_flag(p.op, "min_p") && !(p.min_p >= 0.0 && p.min_p <= 1.0)) {
      throw CaseError("--min_p must be in [0, 1], got " + args.display("min_p"));
    }
    p.temperature = args.real("temperature");
    if (reads_flag(p.op, "temperature") &&
        !(p.temperature > 0.0 && static_cast<float>(p.temperature) > 0.0f &&
          p.temperature <= std::numeric_limits<float>::max())) {
      throw CaseError("--temperature must be a positive float, got " + args.display("temperature"));
    }
    p.joint = args.text("filter_apply_order") == "joint";
    p.distribution = args.text("distribution") == "peaked" ? SamplingDistribution::peaked : SamplingDistribution::flat;
    p.enable_pdl = p.op == SamplingOp::softmax && args.flag("enable_pdl");
    if (args.flag("enable_pdl") && p.op != SamplingOp::softmax) {
      p.warnings.push_back(std::string("--enable_pdl provided but routine ") + info_.name +
                           " does not support PDL; flag is ignored.");
    }
    for (const char* flag : {"vocab_size", "input_dtype", "top_k", "top_p", "min_p", "temperature", "filter_apply_order",
                             "num_speculate_tokens", "max_len", "num_rows"}) {
      if (args.given(flag) && !reads_flag(p.op, flag)) {
        p.warnings.push_back(std::string("--") + flag + " does not apply to " + info_.name + " and is ignored");
      }
    }
    return std::make_unique<SamplingCase>(std::move(p));
  }

 private:
  RoutineInfo info_;
};

}  // namespace

void register_sampling_routines(RoutineRegistry& registry) {
  for (const RoutineInfo& info : kRoutines) registry.add(std::make_unique<SamplingRoutine>(info));
}

}  // namespace kbench
