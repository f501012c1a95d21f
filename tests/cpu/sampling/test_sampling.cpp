// The sampling family without a GPU: the reference's flags and defaults, validation messages,
// warnings, byte formulas, the peaked law's documented numbers, and the refcheck's rules on rows
// made to probe them (ties at the k-th value, nucleus boundaries, chain speculative invariants).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/log.hpp"
#include "core/shell_words.hpp"
#include "kernels/sampling/distributions.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/sampling/sampling_case.hpp"
#include "routines/sampling/sampling_checks.hpp"

#include "case_from_line.hpp"

namespace kbench {
namespace {

class SamplingFlags : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();

  std::unique_ptr<SamplingCase> make(const std::string& line) {
    std::unique_ptr<Case> c = testing::case_from_line(registry, line);
    return std::unique_ptr<SamplingCase>(dynamic_cast<SamplingCase*>(c.release()));
  }
  std::string case_error(const std::string& line) { return testing::case_error_of(registry, line); }
  std::string warnings(const std::string& line) {
    std::ostringstream out;
    make(line)->describe(Log(out, 2));
    return out.str();
  }
};

TEST_F(SamplingFlags, EveryRoutineIsBuiltWithTheReferenceTestName) {
  const std::vector<std::pair<std::string, std::string>> routines = {
      {"softmax", "testSoftmax"},
      {"sampling_from_probs", "testSamplingFromProbs"},
      {"sampling_from_logits", "testSamplingFromLogits"},
      {"top_k_sampling_from_probs", "testTopKSamplingFromProbs"},
      {"top_p_sampling_from_probs", "testTopPSamplingFromProbs"},
      {"top_k_top_p_sampling_from_probs", "testTopKTopPSamplingFromProbs"},
      {"top_k_top_p_sampling_from_logits", "testTopKTopPSamplingFromLogits"},
      {"min_p_sampling_from_probs", "testMinPSamplingFromProbs"},
      {"top_k_renorm_probs", "testTopKRenormProbs"},
      {"top_p_renorm_probs", "testTopPRenormProbs"},
      {"top_k_mask_logits", "testTopKMaskLogits"},
      {"chain_speculative_sampling", "testChainSpeculativeSampling"},
      {"top_k", "testTopK"},
      {"top_k_page_table_transform", "testTopKPageTableTransform"},
      {"top_k_ragged_transform", "testTopKRaggedTransform"},
  };
  for (const auto& [name, test] : routines) {
    const Routine* r = registry.find(name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ(r->family(), "sampling");
    EXPECT_EQ(r->test_name(), test);
    EXPECT_EQ(r->default_backends(), std::vector<std::string>{"cuda"});
    EXPECT_NE(r->find_backend("cuda"), nullptr);
    EXPECT_NE(r->find_backend("flashinfer"), nullptr);
    // The sort-based baseline where there is a filter to sort for.
    const auto c = make("--routine " + name + " --batch_size 2 --vocab_size 100 --max_len 100 --top_k 5");
    EXPECT_EQ(r->find_backend("cub") != nullptr, filters_by_sorting(c->problem().op)) << name;
  }
}

TEST_F(SamplingFlags, DefaultsAreTheReferences) {
  const auto c = make("--routine top_k_top_p_sampling_from_logits --batch_size 4 --vocab_size 1000");
  const SamplingProblem& p = c->problem();
  EXPECT_EQ(p.top_k, 50);
  EXPECT_DOUBLE_EQ(p.top_p, 0.9);
  EXPECT_DOUBLE_EQ(p.min_p, 0.1);
  EXPECT_DOUBLE_EQ(p.temperature, 1.0);
  EXPECT_FALSE(p.joint);
  EXPECT_EQ(p.num_speculate_tokens, 5);
  EXPECT_EQ(p.input_dtype, DType::float32);
  EXPECT_EQ(p.distribution, SamplingDistribution::flat);
  const auto t = make("--routine top_k_ragged_transform --batch_size 16");
  EXPECT_EQ(t->problem().cols(), 4096);  // --max_len
  EXPECT_EQ(t->problem().rows(), 16);    // --num_rows defaults to --batch_size
  EXPECT_EQ(t->problem().top_k, 50);
  EXPECT_TRUE(make("--routine top_k_top_p_sampling_from_probs --batch_size 1 --vocab_size 9 --top_k 3 "
                   "--filter_apply_order joint")->problem().joint);
  EXPECT_EQ(make("--routine top_k --batch_size 1 --vocab_size 9 --top_k 3 --distribution peaked")->problem().distribution,
            SamplingDistribution::peaked);
}

TEST_F(SamplingFlags, ProbabilityRoutinesTakeFloat32WhateverTheDtypeFlag) {
  EXPECT_EQ(make("--routine top_p_sampling_from_probs --batch_size 2 --vocab_size 100 --input_dtype bfloat16")
                ->problem()
                .input_dtype,
            DType::float32);
  EXPECT_NE(warnings("--routine top_p_sampling_from_probs --batch_size 2 --vocab_size 100 --input_dtype bfloat16")
                .find("[WARNING] --input_dtype does not apply to top_p_sampling_from_probs and is ignored"),
            std::string::npos);
  // top_k_renorm_probs builds its probabilities in --input_dtype, as the reference.
  EXPECT_EQ(make("--routine top_k_renorm_probs --batch_size 2 --vocab_size 100 --input_dtype bfloat16")
                ->problem()
                .input_dtype,
            DType::bfloat16);
}

TEST_F(SamplingFlags, ValidationNamesTheFlag) {
  EXPECT_NE(case_error("-R softmax --batch_size 0 --vocab_size 8").find("--batch_size must be positive, got 0"),
            std::string::npos);
  EXPECT_NE(case_error("-R top_k --batch_size 2 --vocab_size 8 --top_k 9").find("--top_k must be in [1, 8]"),
            std::string::npos);
  EXPECT_NE(case_error("-R top_k_mask_logits --batch_size 2 --vocab_size 8 --top_k 0").find("--top_k"),
            std::string::npos);
  EXPECT_NE(case_error("-R top_p_sampling_from_probs --batch_size 2 --vocab_size 8 --top_p 0").find("--top_p must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(case_error("-R top_p_renorm_probs --batch_size 2 --vocab_size 8 --top_p 1.5").find("--top_p"),
            std::string::npos);
  EXPECT_NE(case_error("-R min_p_sampling_from_probs --batch_size 2 --vocab_size 8 --min_p 2").find("--min_p must be in [0, 1]"),
            std::string::npos);
  EXPECT_NE(case_error("-R softmax --batch_size 2 --vocab_size 8 --temperature 0").find("--temperature must be a positive float"),
            std::string::npos);
  EXPECT_NE(case_error("-R chain_speculative_sampling --batch_size 2 --vocab_size 8 --num_speculate_tokens 0")
                .find("--num_speculate_tokens must be positive"),
            std::string::npos);
  EXPECT_NE(case_error("-R top_k_page_table_transform --batch_size 2 --num_rows 3").find("row r of the scores reads row r"),
            std::string::npos);
  EXPECT_NE(case_error("-R top_k_ragged_transform --batch_size 2 --max_len 10 --top_k 11").find("--top_k must be in [1, 10]"),
            std::string::npos);
  EXPECT_NE(case_error("-R top_k --batch_size 2 --vocab_size 3000000000").find("over 2^31 - 1"), std::string::npos);
  EXPECT_NE(case_error("-R softmax --batch_size 1000000 --vocab_size 2000000").find("over 2^40 elements"),
            std::string::npos);
  // --vocab_size is required except by the transforms (argparse's required flag).
  EXPECT_THROW((void)make("-R softmax --batch_size 2"), std::exception);
  EXPECT_NO_THROW((void)make("-R top_k_ragged_transform --batch_size 2"));
}

TEST_F(SamplingFlags, WarningsForFlagsTheRoutineIgnores) {
  EXPECT_NE(warnings("-R top_k --batch_size 2 --vocab_size 100 --enable_pdl")
                .find("[WARNING] --enable_pdl provided but routine top_k does not support PDL; flag is ignored."),
            std::string::npos);
  EXPECT_EQ(warnings("-R softmax --batch_size 2 --vocab_size 100 --enable_pdl").find("[WARNING]"), std::string::npos);
  EXPECT_TRUE(make("-R softmax --batch_size 2 --vocab_size 100 --enable_pdl")->problem().enable_pdl);
  EXPECT_NE(warnings("-R sampling_from_logits --batch_size 2 --vocab_size 100 --temperature 0.5")
                .find("[WARNING] --temperature does not apply to sampling_from_logits and is ignored"),
            std::string::npos);
  EXPECT_EQ(warnings("-R top_k --batch_size 2 --vocab_size 100 --top_k 7").find("[WARNING]"), std::string::npos);
  const std::string v = warnings("-R top_k_top_p_sampling_from_probs --batch_size 2 --vocab_size 100 --distribution peaked");
  EXPECT_NE(v.find("[VVERBOSE] top_k = 50"), std::string::npos) << v;
  EXPECT_NE(v.find("[VVERBOSE] top_p = 0.9"), std::string::npos) << v;
  EXPECT_NE(v.find("[VVERBOSE] filter_apply_order = 'top_k_first'"), std::string::npos) << v;
  EXPECT_NE(v.find("[VVERBOSE] distribution = 'peaked'"), std::string::npos) << v;
}

TEST_F(SamplingFlags, BytesAreTheReferencesFormulas) {
  const double B = 32, V = 32000, k = 50, n = 5;
  const auto bytes = [&](const std::string& line) { return make(line)->bytes(); };
  const std::string shape = " --batch_size 32 --vocab_size 32000";
  EXPECT_DOUBLE_EQ(bytes("-R softmax --input_dtype bfloat16" + shape), B * V * 2 + 4 * B * V);
  EXPECT_DOUBLE_EQ(bytes("-R sampling_from_probs" + shape), 4 * B * V + 4 * B);
  EXPECT_DOUBLE_EQ(bytes("-R top_k_top_p_sampling_from_probs" + shape), 4 * B * V + 4 * B);
  EXPECT_DOUBLE_EQ(bytes("-R sampling_from_logits --input_dtype float16" + shape), B * V * 2 + 4 * B);
  EXPECT_DOUBLE_EQ(bytes("-R top_k_renorm_probs --input_dtype bfloat16" + shape), 2 * B * V * 2);
  EXPECT_DOUBLE_EQ(bytes("-R top_p_renorm_probs" + shape), 8 * B * V);
  EXPECT_DOUBLE_EQ(bytes("-R top_k_mask_logits" + shape), 2 * B * V * 4);
  EXPECT_DOUBLE_EQ(bytes("-R chain_speculative_sampling" + shape),
                   4 * B * n * V + 4 * B * n + 4 * B * (n + 1) * V + 4 * B * (n + 1) + 8 * B);
  EXPECT_DOUBLE_EQ(bytes("-R top_k --input_dtype bfloat16" + shape), B * V * 2 + B * k * 2 + 8 * B * k);
  const double R = 8, L = 4096;
  EXPECT_DOUBLE_EQ(bytes("-R top_k_page_table_transform --batch_size 32 --num_rows 8"), R * L * 4 + B * L * 4 + 4 * R * k);
  EXPECT_DOUBLE_EQ(bytes("-R top_k_ragged_transform --batch_size 32 --num_rows 8"), R * L * 4 + 4 * R * k);
  for (const auto& r : registry.all()) {
    if (r->family() != "sampling") continue;
    const auto c = make("-R " + std::string(r->name()) + shape + " --top_k 5");
    EXPECT_EQ(c->flops(), 0.0) << r->name();
    EXPECT_GT(c->bytes_per_copy(), 0u) << r->name();
    EXPECT_FALSE(c->tensors().empty()) << r->name();
  }
}

// The sort-based baseline's parameters carry top_k only for the routines that take it: every case
// holds --top_k's default (50), and the cub tail once cut top_p_renorm_probs' nucleus to the top 50
// with it (the H100's first run: 68% of a flat row's nucleus dropped).
TEST_F(SamplingFlags, SortBaselineTakesTopKOnlyWhereTheRoutineDoes) {
  const std::string shape = " --batch_size 4 --vocab_size 1000";
  EXPECT_EQ(make("-R top_p_renorm_probs --top_p 0.9" + shape)->sort_params(SamplingCase::kNoCopy).top_k, 0);
  EXPECT_EQ(make("-R top_p_sampling_from_probs --top_p 0.9" + shape)->sort_params(SamplingCase::kNoCopy).top_k, 0);
  EXPECT_EQ(make("-R min_p_sampling_from_probs --min_p 0.1" + shape)->sort_params(SamplingCase::kNoCopy).top_k, 0);
  EXPECT_EQ(make("-R top_k_renorm_probs --top_k 7" + shape)->sort_params(SamplingCase::kNoCopy).top_k, 7);
  EXPECT_EQ(make("-R top_k_sampling_from_probs --top_k 7" + shape)->sort_params(SamplingCase::kNoCopy).top_k, 7);
  EXPECT_EQ(make("-R top_k_mask_logits --top_k 7" + shape)->sort_params(SamplingCase::kNoCopy).top_k, 7);
}

// The peaked law (distributions.hpp): a permutation of the ranks per row, and the numbers the
// README and --help quote.
TEST(SamplingDistributionLaw, PeakedRanksArePermutations) {
  for (const uint64_t cols : {1ull, 2ull, 1000ull, 50257ull, 32000ull}) {
    for (const uint64_t row : {0ull, 7ull}) {
      const auto p = kernels::sampling::ZipfPlacement::of_row(42, row, cols);
      std::vector<char> seen(cols, 0);
      for (uint64_t c = 0; c < cols; ++c) {
        const uint64_t r = p.rank(c);
        ASSERT_LT(r, cols);
        EXPECT_FALSE(seen[r]) << "rank " << r << " twice (cols " << cols << ")";
        seen[r] = 1;
      }
    }
  }
}

TEST(SamplingDistributionLaw, PeakedTopPKeepsTensOfTokens) {
  for (const int vocab : {32000, 50257, 128256, 151936, 262144}) {
    std::vector<double> w(static_cast<std::size_t>(vocab));
    for (int j = 0; j < vocab; ++j) w[j] = std::pow(j + 1.0, -kernels::sampling::kZipfExponent);
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    double mass = 0.0;
    int nucleus = 0;
    while (mass < 0.9 * total) mass += w[nucleus++];
    const double top50 = std::accumulate(w.begin(), w.begin() + 50, 0.0) / total;
    EXPECT_GE(nucleus, 54) << vocab;
    EXPECT_LE(nucleus, 57) << vocab;
    EXPECT_NEAR(top50, 0.89, 0.01) << vocab;
  }
  // The flat law's top-p 0.9 keeps ~90% of the row: uniform values u, mass above u ~ 1 - u^2.
  EXPECT_LT(kernels::sampling::uniform24(1, 0), 1.0f);
}

// ---------------------------------------------------------------------------------------------
// The refcheck's rules.

TEST(SamplingChecks, SampledIdsInsideTheirFilters) {
  // Row 0: one value per id; p sorted by index descending.
  const std::vector<float> row = {0.4f, 0.3f, 0.2f, 0.1f, 0.0f};
  const auto check = [&](SamplerRule rule, float id) { return check_samples(rule, 1, 5, row, std::vector<float>{id}).mismatches; };
  EXPECT_EQ(check({}, 3), 0);
  EXPECT_EQ(check({}, 4), 1);    // probability 0
  EXPECT_EQ(check({}, 5), 1);    // out of range
  EXPECT_EQ(check({}, 1.5f), 1);  // not an integer
  SamplerRule top_k;
  top_k.top_k = 2;
  EXPECT_EQ(check(top_k, 1), 0);
  EXPECT_EQ(check(top_k, 2), 1);
  SamplerRule top_p;
  top_p.top_p = 0.7;  // mass above id 1 = 0.4 < 0.7; above id 2 = 0.7, not below 0.7 + slack
  EXPECT_EQ(check(top_p, 1), 0);
  top_p.top_p = 0.69;
  EXPECT_EQ(check(top_p, 2), 1);
  SamplerRule min_p;
  min_p.min_p = 0.5;  // 0.2 >= 0.5 * 0.4
  EXPECT_EQ(check(min_p, 2), 0);
  EXPECT_EQ(check(min_p, 3), 1);
  // top_k_first measures top-p against the top-k mass; joint against the row's.
  SamplerRule first;
  first.top_k = 3;
  first.top_p = 0.5;  // top-3 mass 0.9: above id 1 = 0.4 < 0.45 -> in; above id 2 = 0.7 -> out
  EXPECT_EQ(check(first, 1), 0);
  EXPECT_EQ(check(first, 2), 1);
  SamplerRule joint = first;
  joint.joint = true;
  joint.top_p = 0.75;  // above id 2 = 0.7 < 0.75 and 2 larger values < 3
  EXPECT_EQ(check(joint, 2), 0);
  // Ties at the k-th value: either tied id is in the top 2.
  const std::vector<float> tied = {0.5f, 0.25f, 0.25f};
  EXPECT_EQ(check_samples(top_k, 1, 3, tied, std::vector<float>{2}).mismatches, 0);
  // From logits: every token has positive probability.
  SamplerRule logits;
  logits.from_logits = true;
  EXPECT_EQ(check_samples(logits, 1, 3, std::vector<float>{-50.0f, 0.0f, 3.0f}, std::vector<float>{0}).mismatches, 0);
}

TEST(SamplingChecks, TopKRenormAcceptsEitherTieAndFollowsWhatWasKept) {
  const std::vector<float> row = {0.4f, 0.2f, 0.2f, 0.1f, 0.1f};
  const Tolerance t{1e-2, 1e-2};
  // k = 2: 0.4 kept, one or both of the tied 0.2s.
  EXPECT_EQ(check_top_k_renorm(1, 5, 2, row, std::vector<float>{0.4f / 0.6f, 0.2f / 0.6f, 0, 0, 0}, t).mismatches, 0);
  EXPECT_EQ(check_top_k_renorm(1, 5, 2, row, std::vector<float>{0.4f / 0.6f, 0, 0.2f / 0.6f, 0, 0}, t).mismatches, 0);
  EXPECT_EQ(check_top_k_renorm(1, 5, 2, row, std::vector<float>{0.5f, 0.25f, 0.25f, 0, 0}, t).mismatches, 0);
  EXPECT_GT(check_top_k_renorm(1, 5, 2, row, std::vector<float>{1.0f, 0, 0, 0, 0}, t).mismatches, 0);  // fewer than k
  EXPECT_GT(check_top_k_renorm(1, 5, 2, row, std::vector<float>{0.4f, 0.2f, 0, 0, 0}, t).mismatches, 0);  // not renormalised
  EXPECT_GT(check_top_k_renorm(1, 5, 2, row, std::vector<float>{0.5f, 0.25f, 0, 0.25f, 0}, t).mismatches, 0);
}

TEST(SamplingChecks, TopKMaskAcceptsEitherTie) {
  const float inf = INFINITY;
  const std::vector<float> row = {3.0f, 1.0f, 1.0f, -2.0f};
  const Tolerance t{1e-3, 1e-5};
  EXPECT_EQ(check_top_k_mask(1, 4, 2, row, std::vector<float>{3.0f, -inf, 1.0f, -inf}, t).mismatches, 0);
  EXPECT_EQ(check_top_k_mask(1, 4, 2, row, std::vector<float>{3.0f, 1.0f, 1.0f, -inf}, t).mismatches, 0);
  EXPECT_EQ(check_top_k_mask(1, 4, 2, row, std::vector<float>{3.0f, -inf, -inf, -inf}, t).mismatches, 1);
  EXPECT_EQ(check_top_k_mask(1, 4, 2, row, std::vector<float>{3.0f, 1.0f, -inf, -2.0f}, t).mismatches, 1);
}

TEST(SamplingChecks, TopPRenormKeepsTheNucleusWithSlackAtItsEdge) {
  const std::vector<float> row = {0.5f, 0.3f, 0.15f, 0.05f};
  const Tolerance t{1e-2, 1e-3};
  // top_p 0.7: 0.5 (before: 0) and 0.3 (before: 0.5) kept; 0.15 has 0.8 before it.
  EXPECT_EQ(check_top_p_renorm(1, 4, 0.7, row, std::vector<float>{0.625f, 0.375f, 0, 0}, t).mismatches, 0);
  EXPECT_GT(check_top_p_renorm(1, 4, 0.7, row, std::vector<float>{1.0f, 0, 0, 0}, t).mismatches, 0);
  EXPECT_GT(check_top_p_renorm(1, 4, 0.7, row, std::vector<float>{0.5f / 0.95f, 0.3f / 0.95f, 0.15f / 0.95f, 0}, t)
                .mismatches,
            0);
  // top_p 0.8: 0.15's mass before is exactly 0.8, within the slack: kept or not.
  EXPECT_EQ(check_top_p_renorm(1, 4, 0.8, row, std::vector<float>{0.625f, 0.375f, 0, 0}, t).mismatches, 0);
  EXPECT_EQ(check_top_p_renorm(1, 4, 0.8, row, std::vector<float>{0.5f / 0.95f, 0.3f / 0.95f, 0.15f / 0.95f, 0}, t)
                .mismatches,
            0);
}

TEST(SamplingChecks, TopKValuesAndIndices) {
  const std::vector<float> row = {1.0f, 5.0f, 3.0f, 5.0f};
  const Tolerance t{1e-3, 1e-5};
  auto ok = check_top_k(1, 4, 2, row, std::vector<float>{5.0f, 5.0f}, std::vector<float>{3, 1}, t);
  EXPECT_EQ(ok[0].mismatches + ok[1].mismatches, 0);
  auto repeated = check_top_k(1, 4, 2, row, std::vector<float>{5.0f, 5.0f}, std::vector<float>{1, 1}, t);
  EXPECT_EQ(repeated[1].mismatches, 1);
  auto misplaced = check_top_k(1, 4, 2, row, std::vector<float>{5.0f, 3.0f}, std::vector<float>{1, 0}, t);
  EXPECT_GT(misplaced[0].mismatches, 0);
  EXPECT_EQ(misplaced[1].mismatches, 1);
}

TEST(SamplingChecks, TransformsAcceptAnyTopKSetThroughTheirMaps) {
  // Scores of one row, k = 2: index 1 (5), then one of the tied 3s (indices 0, 2).
  const std::vector<float> scores = {3.0f, 5.0f, 3.0f, 1.0f};
  const std::vector<int32_t> lengths = {4};
  // Page table with repeated pages.
  const std::vector<float> table = {7, 9, 7, 9};
  EXPECT_EQ(check_transform(1, 4, 2, scores, table, {}, lengths, std::vector<float>{7, 9}).mismatches, 0);
  EXPECT_EQ(check_transform(1, 4, 2, scores, table, {}, lengths, std::vector<float>{9, 9}).mismatches, 1);
  const std::vector<int32_t> offsets = {100};
  EXPECT_EQ(check_transform(1, 4, 2, scores, {}, offsets, lengths, std::vector<float>{102, 101}).mismatches, 0);
  EXPECT_EQ(check_transform(1, 4, 2, scores, {}, offsets, lengths, std::vector<float>{103, 101}).mismatches, 1);
  // A row shorter than k: every index in order, then -1.
  const std::vector<int32_t> short_row = {1};
  EXPECT_EQ(check_transform(1, 4, 2, scores, {}, offsets, short_row, std::vector<float>{100, -1}).mismatches, 0);
  EXPECT_EQ(check_transform(1, 4, 2, scores, {}, offsets, short_row, std::vector<float>{101, -1}).mismatches, 1);
}

TEST(SamplingChecks, ChainSpeculativeInvariants) {
  // One request, n = 2, vocab 3. Draft tokens 0 then 1.
  const std::vector<float> draft_ids = {0, 1};
  const std::vector<float> draft = {0.5f, 0.3f, 0.2f, /* position 1 */ 0.2f, 0.6f, 0.2f};
  const std::vector<float> target = {0.6f, 0.2f, 0.2f, /* 1 */ 0.3f, 0.3f, 0.4f, /* bonus */ 0.1f, 0.1f, 0.8f};
  const auto mismatches = [&](std::vector<float> ids, float accepted, float emitted) {
    const auto c = check_chain(1, 2, 3, draft_ids, draft, target, ids, std::vector<float>{accepted},
                               std::vector<float>{emitted});
    return c[0].mismatches + c[1].mismatches + c[2].mismatches;
  };
  // Position 0 always accepted (target 0.6 > draft 0.5); position 1 rejectable (0.3 <= 0.6): stop
  // there, replacement from max(q - p, 0) = {0.1, 0, 0.2}: token 0 or 2.
  EXPECT_EQ(mismatches({0, 2, -1}, 1, 1), 0);
  EXPECT_EQ(mismatches({0, 0, -1}, 1, 1), 0);
  EXPECT_GT(mismatches({0, 1, -1}, 1, 1), 0);   // the rejected token again
  EXPECT_GT(mismatches({0, 2, 2}, 1, 1), 0);    // no -1 after the stop
  EXPECT_GT(mismatches({2, -1, -1}, 0, 0), 0);  // a stop at a draft that is always accepted
  EXPECT_EQ(mismatches({0, 1, 2}, 2, 2), 0);    // both accepted, a bonus token
  EXPECT_GT(mismatches({0, 2, -1}, 0, 1), 0);   // accepted below emitted
}

TEST(SamplingChecks, SoftmaxReference) {
  const std::vector<float> logits = {0.0f, std::log(3.0f)};
  const std::vector<float> p = softmax_reference(1, 2, 1.0, logits);
  EXPECT_NEAR(p[0], 0.25, 1e-7);
  EXPECT_NEAR(p[1], 0.75, 1e-7);
}

}  // namespace
}  // namespace kbench
