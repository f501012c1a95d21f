// The sampling family's refcheck, on the host from fp32 (double) copies of the inputs: plain loops
// and sorts, nothing clever. Deterministic outputs are compared with the reference tool's
// tolerances, ties at the k-th value (or at the nucleus boundary) accepted either way: a tied value
// may be kept or dropped as long as enough are kept, and the renormalised values follow what the
// backend kept. Sampled ids are checked by rule: inside the filtered set, computed here in double.
//
// Slack at set boundaries: masses are compared with 1e-4 of the reference mass to spare. Float sums
// of up to 262144 terms in any blocked order differ from the double sum by ~1e-6 relative; 1e-4
// leaves 100 times that and still refuses a token whose larger neighbours hold measurably more than
// top_p (a flat 128256-token row: 1e-4 is the mass of 12 tokens at the edge of a 115000-token
// nucleus; a peaked row's boundary tokens weigh far more than 1e-4).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/refcheck.hpp"

namespace kbench {

inline constexpr double kMassSlack = 1e-4;

// The filters of a sampler (as kernels::sampling::SamplerParams).
struct SamplerRule {
  bool from_logits = false;
  int64_t top_k = 0;   // 0 or >= vocab: off
  double top_p = 1.0;  // 1: off
  double min_p = 0.0;  // 0: off
  bool joint = false;  // top-p against the whole row's mass, not the top-k set's
};

// One id per row: an integer in [0, vocab) whose probability is positive and which every filter
// keeps (top-k: fewer than k larger values; min-p: at least min_p times the largest probability,
// 1e-6 relative slack for the float product; top-p: the mass of larger values below top_p of the
// reference mass plus kMassSlack).
[[nodiscard]] Comparison check_samples(const SamplerRule& rule, int64_t rows, int64_t vocab, std::span<const float> input,
                                       std::span<const float> ids);

// softmax(x / temperature) in double.
[[nodiscard]] std::vector<float> softmax_reference(int64_t rows, int64_t cols, double temperature,
                                                   std::span<const float> logits);

// Renormalised top-k: every value above the k-th largest kept, every value below it 0, values equal
// to it either, at least k kept, kept values = x / (sum of what was kept) within `tolerance`.
[[nodiscard]] Comparison check_top_k_renorm(int64_t rows, int64_t cols, int64_t k, std::span<const float> input,
                                            std::span<const float> output, Tolerance tolerance);

// Masked top-k: as the renorm, with x itself kept and -inf for what is dropped.
[[nodiscard]] Comparison check_top_k_mask(int64_t rows, int64_t cols, int64_t k, std::span<const float> input,
                                          std::span<const float> output, Tolerance tolerance);

// Renormalised top-p: a value may be kept when the mass above it is below top_p (of the row's mass,
// plus kMassSlack), must be when even after every tie the mass before it is below top_p (minus
// kMassSlack) or it is the largest; kept values = x / (sum of what was kept) within `tolerance`.
[[nodiscard]] Comparison check_top_p_renorm(int64_t rows, int64_t cols, double top_p, std::span<const float> input,
                                            std::span<const float> output, Tolerance tolerance);

// top_k: "values" (sorted per row, against the k largest, within `tolerance`) and "indices" (in
// range, distinct, input[index] == value).
[[nodiscard]] std::vector<Comparison> check_top_k(int64_t rows, int64_t cols, int64_t k, std::span<const float> input,
                                                  std::span<const float> values, std::span<const float> indices,
                                                  Tolerance tolerance);

// The transforms: row r's k outputs are the images of a top-k set of the first lengths[r] scores
// (all larger than the k-th, the rest equal to it), through `map` (a page table row, or + offset);
// rows of lengths[r] <= k give every index in order, then -1. `page_table` is [rows][cols] (empty:
// ragged, with `offsets`).
[[nodiscard]] Comparison check_transform(int64_t rows, int64_t cols, int64_t k, std::span<const float> scores,
                                         std::span<const float> page_table, std::span<const int32_t> offsets,
                                         std::span<const int32_t> lengths, std::span<const float> output);

// Chain speculative sampling (kernels::sampling::ChainParams): "output_token_ids", "accepted_num",
// "emitted_num". With e = emitted: 0 <= e <= n; ids[0..e) = the draft ids, each with a positive
// target probability; the draft at e rejectable (target <= draft); ids[e] a token with target >
// draft at e (at e = n: target > 0); -1 after; e + (positions after e with target > draft) <=
// accepted <= e + (positions after e with target > 0).
[[nodiscard]] std::vector<Comparison> check_chain(int64_t rows, int64_t n, int64_t vocab,
                                                  std::span<const float> draft_ids, std::span<const float> draft,
                                                  std::span<const float> target, std::span<const float> ids,
                                                  std::span<const float> accepted, std::span<const float> emitted);

}  // namespace kbench
