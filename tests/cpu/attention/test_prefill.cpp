// The prefill routines without a GPU: plan_prefill's work list (coverage, tile bound, order), the
// reference's length rules, the formulas with causal q < kv, case validation, and the kbench binary
// (help, usage errors, --list, the shipped prefill testlists).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "core/cli.hpp"
#include "core/shell_words.hpp"
#include "core/testlist.hpp"
#include "kernels/attention/prefill/prefill.hpp"
#include "routines/attention/attention_formulas.hpp"
#include "routines/attention/paged_kv_layout.hpp"
#include "routines/builtin_routines.hpp"
#include "run_command.hpp"

#include "case_from_line.hpp"

namespace kbench {
namespace {

namespace kk = kernels;
using kk::PrefillKernel;

constexpr const char* kRagged = "BatchPrefillWithRaggedKVCacheWrapper";
constexpr const char* kPaged = "BatchPrefillWithPagedKVCacheWrapper";

kk::PrefillParams plan_params(int num_qo_heads, int num_kv_heads, int head_dim_qk, int head_dim_vo, bool causal,
                              int batch) {
  kk::PrefillParams p;
  p.batch = batch;
  p.num_qo_heads = num_qo_heads;
  p.num_kv_heads = num_kv_heads;
  p.head_dim_qk = head_dim_qk;
  p.head_dim_vo = head_dim_vo;
  p.causal = causal;
  p.sm_scale = 0.1f;
  return p;
}

// indptr of requests of these lengths stored back to back from row `first` (the plans must take
// the rows from the indptr arrays, not assume they start at 0).
std::vector<int32_t> offsets_from(const std::vector<int32_t>& lens, int32_t first) {
  std::vector<int32_t> indptr(1, first);
  for (int32_t len : lens) indptr.push_back(indptr.back() + len);
  return indptr;
}

constexpr int32_t kFirstQRow = 3;
constexpr int32_t kFirstKvRow = 5;

// The plan of a ragged batch of these lengths (rows from kFirstQRow / kFirstKvRow).
std::vector<kk::PrefillWorkItem> plan_ragged(PrefillKernel kernel, const kk::PrefillParams& p,
                                             const std::vector<int32_t>& q_lens, const std::vector<int32_t>& kv_lens,
                                             int sms) {
  return kk::plan_prefill(kernel, p, offsets_from(q_lens, kFirstQRow), offsets_from(kv_lens, kFirstKvRow), {}, sms);
}

// Keys the last row of rows [q_begin, q_end) sees.
int64_t keys_seen(const kk::PrefillWorkItem& it, int64_t q_len, int64_t kv_len, bool causal) {
  return causal ? std::clamp<int64_t>(it.q_end + kv_len - q_len, 0, kv_len) : kv_len;
}

// Every (request, head, row) exactly once, tiles within block_m and their request; a round of
// `width` items (the CTAs that run at once) touches few (request, kv head) groups; and a persistent
// grid of `width` CTAs taking items i, i + width, ... ends balanced: the busiest CTA has at most one
// item's work more than the least busy (longest-processing-time dealing per round).
::testing::AssertionResult check_plan(const std::vector<kk::PrefillWorkItem>& items, const kk::PrefillParams& p,
                                    const std::vector<int32_t>& q_lens, const std::vector<int32_t>& kv_lens,
                                    int block_m, std::size_t width) {
  const int group = p.num_qo_heads / p.num_kv_heads;
  std::map<std::tuple<int, int, int>, int> seen;
  const auto cost = [&](const kk::PrefillWorkItem& x) {
    const auto b = static_cast<std::size_t>(x.request);
    return keys_seen(x, q_lens[b], kv_lens[b], p.causal) + block_m;
  };
  std::vector<int64_t> load(width, 0);
  int64_t max_item = 0;
  const std::vector<int32_t> q_rows = offsets_from(q_lens, kFirstQRow);
  const std::vector<int32_t> kv_rows = offsets_from(kv_lens, kFirstKvRow);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const kk::PrefillWorkItem& it = items[i];
    if (it.request < 0 || it.request >= p.batch || it.qo_head < 0 || it.qo_head >= p.num_qo_heads) {
      return ::testing::AssertionFailure() << "item " << i << " outside the batch or heads";
    }
    const auto b = static_cast<std::size_t>(it.request);
    const int q_len = q_lens[b];
    if (it.q_row0 != q_rows[b] || it.q_len != q_len || it.kv_row0 != kv_rows[b] || it.kv_len != kv_lens[b]) {
      return ::testing::AssertionFailure() << "item " << i << " of request " << it.request << " has rows " << it.q_row0
                                         << " / " << it.kv_row0 << " and lengths " << it.q_len << " / " << it.kv_len;
    }
    if (it.q_begin < 0 || it.q_end <= it.q_begin || it.q_end > q_len || it.q_end - it.q_begin > block_m) {
      return ::testing::AssertionFailure() << "item " << i << " rows [" << it.q_begin << ", " << it.q_end
                                         << ") of request " << it.request << " (q_len " << q_len << ", block_m "
                                         << block_m << ")";
    }
    for (int r = it.q_begin; r < it.q_end; ++r) ++seen[{it.request, it.qo_head, r}];
    load[i % width] += cost(it);
    max_item = std::max(max_item, cost(it));
  }
  // Locality: the groups of a round are consecutive in the grouped order, so a round holds at most
  // width / (smallest group) + 2 of them.
  std::map<std::pair<int, int>, int64_t> group_items;
  for (const auto& it : items) ++group_items[{it.request, it.qo_head / group}];
  int64_t smallest = std::numeric_limits<int64_t>::max();
  for (const auto& [key, n] : group_items) smallest = std::min(smallest, n);
  for (std::size_t start = 0; start < items.size(); start += width) {
    std::set<std::pair<int, int>> groups;
    for (std::size_t i = start; i < std::min(items.size(), start + width); ++i) {
      groups.insert({items[i].request, items[i].qo_head / group});
    }
    if (static_cast<int64_t>(groups.size()) > static_cast<int64_t>(width) / smallest + 2) {
      return ::testing::AssertionFailure() << "round at " << start << " spans " << groups.size() << " groups";
    }
  }
  if (items.size() >= width) {
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    if (*hi - *lo > max_item) {
      return ::testing::AssertionFailure() << "CTA loads " << *lo << " .. " << *hi << " differ by more than an item ("
                                         << max_item << ")";
    }
  }
  int64_t rows = 0;
  for (const auto& [key, count] : seen) {
    if (count != 1) {
      return ::testing::AssertionFailure() << "request " << std::get<0>(key) << " head " << std::get<1>(key) << " row "
                                         << std::get<2>(key) << " covered " << count << " times";
    }
    ++rows;
  }
  const int64_t want = static_cast<int64_t>(std::accumulate(q_lens.begin(), q_lens.end(), int64_t{0})) * p.num_qo_heads;
  if (rows != want) return ::testing::AssertionFailure() << rows << " rows covered, want " << want;
  return ::testing::AssertionSuccess();
}

// fa3's persistent grid: one CTA per SM; fa2 resident CTAs: at least one per SM.
constexpr int kSms = 132;

TEST(PrefillPlan, CoversEveryRowOnceInBalancedRounds) {
  const std::vector<int32_t> q_lens = {1, 37, 0, 129, 1000, 64, 5, 300};
  const std::vector<int32_t> kv_lens = {1, 200, 7, 129, 1000, 0, 900, 300};  // q < kv, kv 0, q 0
  for (PrefillKernel kernel : {PrefillKernel::fa2, PrefillKernel::fa3}) {
    for (bool causal : {false, true}) {
      for (const auto& [hq, hkv, dqk, dvo] : {std::tuple{8, 8, 128, 128}, std::tuple{20, 4, 64, 64},
                                              std::tuple{16, 2, 192, 128}, std::tuple{8, 1, 256, 256}}) {
        const kk::PrefillParams p = plan_params(hq, hkv, dqk, dvo, causal, static_cast<int>(q_lens.size()));
        const int block_m = kk::prefill_block_m(kernel, p);
        ASSERT_GE(block_m, 1);
        for (int sms : {1, 7, kSms}) {
          const auto items = plan_ragged(kernel, p, q_lens, kv_lens, sms);
          // fa3's persistent grid is one CTA per SM: its rounds are `sms` wide. fa2's are as wide as
          // its resident CTAs (1 or 2 per SM): a round of 2 sms has rounds of sms inside it only for
          // coverage, so fa2 is checked with its own width where it is known to be 2 (not d256).
          const std::size_t width = static_cast<std::size_t>(sms) *
                                    (kernel == PrefillKernel::fa2 && dqk != 256 ? 2 : 1);
          EXPECT_TRUE(check_plan(items, p, q_lens, kv_lens, block_m, width))
              << (kernel == PrefillKernel::fa2 ? "fa2" : "fa3") << (causal ? " causal" : "") << " heads " << hq << "/"
              << hkv << " dims " << dqk << "/" << dvo << " sms " << sms;
          // ceil(q_len / block_m) items per (request, head); none for the empty request.
          int64_t want = 0;
          for (int32_t q : q_lens) want += (q + block_m - 1) / block_m * hq;
          EXPECT_EQ(static_cast<int64_t>(items.size()), want);
          EXPECT_TRUE(std::none_of(items.begin(), items.end(), [](const auto& it) { return it.request == 2; }));
        }
      }
    }
  }
}

TEST(PrefillPlan, DeepSeekRoundsStayOnFewHeads) {
  // 16 x 1024, 128/128 heads, qk 192 / vo 128, causal: 8 tiles per (request, head). A round of 132
  // CTAs must work on ~17 heads (their K/V share the L2), not on 132 heads of one tile each.
  const std::vector<int32_t> lens(16, 1024);
  const kk::PrefillParams p = plan_params(128, 128, 192, 128, true, 16);
  const auto items = plan_ragged(PrefillKernel::fa3, p, lens, lens, kSms);
  ASSERT_EQ(items.size(), 16u * 128 * 8);
  EXPECT_TRUE(check_plan(items, p, lens, lens, kk::prefill_block_m(PrefillKernel::fa3, p), kSms));
  std::set<int> heads;
  for (std::size_t i = 0; i < kSms; ++i) heads.insert(items[i].request * 128 + items[i].qo_head);
  EXPECT_LE(heads.size(), 18u);
}

TEST(PrefillPlan, KeepsTheHeadsOfAKvHeadTogether) {
  // Uniform lengths without a mask: every tile costs the same, so the first round is in grouped
  // order: request 0, kv head 0, tile 0, query heads 0..7, then tile 1, ...
  const std::vector<int32_t> lens(4, 1024);
  const kk::PrefillParams p = plan_params(64, 8, 128, 128, false, 4);
  const auto items = plan_ragged(PrefillKernel::fa3, p, lens, lens, kSms);
  ASSERT_GE(items.size(), 16u);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(items[static_cast<std::size_t>(i)].request, 0);
    EXPECT_EQ(items[static_cast<std::size_t>(i)].qo_head, i % 8);
    EXPECT_EQ(items[static_cast<std::size_t>(i)].q_begin, (i / 8) * 128);
  }
  // Causal: the first item is the costliest tile of the first group (its request's last rows).
  const kk::PrefillParams causal = plan_params(64, 8, 128, 128, true, 4);
  const auto causal_items = plan_ragged(PrefillKernel::fa3, causal, lens, lens, kSms);
  EXPECT_EQ(causal_items.front().q_end, 1024);
  EXPECT_TRUE(check_plan(causal_items, causal, lens, lens, 128, kSms));
}

TEST(PrefillPlan, ReadsPagedLengthsFromTheLastPage) {
  kk::PrefillParams p = plan_params(4, 2, 128, 128, true, 3);
  p.paged = true;
  p.pages.page_size = 16;
  // 3 pages, last holding 5 keys: 37 keys; no page: 0 keys; 1 full page: 16 keys.
  const std::vector<int32_t> qo_indptr = {0, 40, 41, 57};
  const std::vector<int32_t> kv_indptr = {2, 5, 5, 6};
  const auto items = kk::plan_prefill(PrefillKernel::fa3, p, qo_indptr, kv_indptr, {5, 16, 16}, kSms);
  ASSERT_FALSE(items.empty());
  const std::vector<int32_t> kv_lens = {37, 0, 16};
  for (const auto& it : items) {
    const auto b = static_cast<std::size_t>(it.request);
    EXPECT_EQ(it.kv_len, kv_lens[b]) << "request " << b;
    EXPECT_EQ(it.kv_row0, kv_indptr[b]) << "request " << b;
    EXPECT_EQ(it.q_row0, qo_indptr[b]) << "request " << b;
    EXPECT_EQ(it.q_len, qo_indptr[b + 1] - qo_indptr[b]) << "request " << b;
  }
  EXPECT_THROW((void)kk::plan_prefill(PrefillKernel::fa3, p, qo_indptr, kv_indptr, {0, 16, 16}, kSms),
               std::invalid_argument);  // a used last page holds at least one key
  EXPECT_THROW((void)kk::plan_prefill(PrefillKernel::fa3, p, qo_indptr, kv_indptr, {5, 16, 17}, kSms),
               std::invalid_argument);  // and at most a page
  EXPECT_THROW((void)kk::plan_prefill(PrefillKernel::fa3, p, qo_indptr, kv_indptr, {5, 16}, kSms),
               std::invalid_argument);
}

TEST(PrefillPlan, RejectsInconsistentInput) {
  const kk::PrefillParams p = plan_params(8, 2, 128, 128, true, 2);
  const std::vector<int32_t> two = {0, 1, 3};
  EXPECT_THROW((void)kk::plan_prefill(PrefillKernel::fa2, p, {0, 1, 3, 6}, {0, 1, 3, 6}, {}, kSms),
               std::invalid_argument);  // three requests, batch 2
  EXPECT_THROW((void)kk::plan_prefill(PrefillKernel::fa2, p, two, {0, 1}, {}, kSms), std::invalid_argument);
  EXPECT_THROW((void)kk::plan_prefill(PrefillKernel::fa2, p, {0, 1, 0}, two, {}, kSms), std::invalid_argument);
  kk::PrefillParams bad_heads = p;
  bad_heads.num_kv_heads = 3;
  EXPECT_THROW((void)kk::plan_prefill(PrefillKernel::fa3, bad_heads, two, two, {}, kSms), std::invalid_argument);
  EXPECT_TRUE(plan_ragged(PrefillKernel::fa3, p, {0, 0}, {5, 0}, kSms).empty());
  EXPECT_THROW((void)kk::plan_prefill(PrefillKernel::fa3, p, two, two, {}, 0), std::invalid_argument);
}

TEST(PrefillLengths, FollowTheReferenceRules) {
  // s_qo == s_kv: the kv lengths are the q lengths.
  const PrefillLengths same = make_prefill_lengths(64, 500, 500, true, 42);
  EXPECT_EQ(same.q, same.kv);
  EXPECT_TRUE(std::all_of(same.q.begin(), same.q.end(), [](int32_t v) { return v >= 1 && v <= 500; }));
  EXPECT_EQ(make_prefill_lengths(64, 500, 500, true, 42).q, same.q);  // deterministic
  // s_qo < s_kv: drawn on their own, then raised to at least q.
  const PrefillLengths longer = make_prefill_lengths(256, 300, 1000, true, 7);
  bool some_raised = false;
  bool some_longer = false;
  for (std::size_t b = 0; b < longer.q.size(); ++b) {
    EXPECT_GE(longer.q[b], 1);
    EXPECT_LE(longer.q[b], 300);
    EXPECT_GE(longer.kv[b], longer.q[b]);
    EXPECT_LE(longer.kv[b], 1000);
    some_raised = some_raised || longer.kv[b] == longer.q[b];
    some_longer = some_longer || longer.kv[b] > 300;
  }
  EXPECT_TRUE(some_raised);
  EXPECT_TRUE(some_longer);
  // Fixed lengths: the maxima.
  const PrefillLengths fixed = make_prefill_lengths(3, 100, 4096, false, 1);
  EXPECT_EQ(fixed.q, (std::vector<int32_t>{100, 100, 100}));
  EXPECT_EQ(fixed.kv, (std::vector<int32_t>{4096, 4096, 4096}));
  EXPECT_THROW((void)make_prefill_lengths(3, 200, 100, false, 1), std::invalid_argument);
  EXPECT_THROW((void)make_prefill_lengths(3, 0, 100, false, 1), std::invalid_argument);
}

TEST(PrefillLengths, TokenOffsetsAndText) {
  EXPECT_EQ(token_offsets(std::vector<int32_t>{3, 0, 5}), (std::vector<int32_t>{0, 3, 3, 8}));
  EXPECT_EQ(token_offsets(std::vector<int32_t>{}), (std::vector<int32_t>{0}));
  EXPECT_THROW((void)token_offsets(std::vector<int32_t>{2'000'000'000, 2'000'000'000}), std::invalid_argument);
  EXPECT_EQ(lengths_text(std::vector<int32_t>{103, 436, 1}), "[103, 436, 1]");
}

TEST(PrefillFormulas, CausalWithShorterQueries) {
  // Bottom-right causal: H_q (d_qk + d_vo) sum q (2k - q), which is twice the visible (row, key)
  // pairs less the diagonal, times the per-pair work.
  const AttentionSizes causal{16, 4, 192, 128, true, 2, 2, 2};
  const std::vector<int32_t> q = {10, 300, 1};
  const std::vector<int32_t> k = {50, 300, 4096};
  double pairs = 0;
  for (std::size_t b = 0; b < q.size(); ++b) {
    for (int i = 0; i < q[b]; ++i) pairs += i + k[b] - q[b] + 1;  // row i sees keys 0 .. i + k - q
  }
  const double diagonal = 10 + 300 + 1;
  EXPECT_DOUBLE_EQ(attention_flops(causal, q, k), 16.0 * 320 * (2 * pairs - diagonal));
  EXPECT_DOUBLE_EQ(attention_flops(causal, q, k), 16.0 * 320 * (10 * 90 + 300 * 300 + 1 * 8191));
  AttentionSizes full = causal;
  full.causal = false;
  EXPECT_DOUBLE_EQ(attention_flops(full, q, k), 2.0 * 16 * 320 * (500 + 90000 + 4096));
  EXPECT_DOUBLE_EQ(attention_bytes(full, q, k), 311.0 * 16 * 192 * 2 + 4446.0 * 4 * 320 * 2 + 311.0 * 16 * 128 * 2);
}

class PrefillValidation : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();
  std::unique_ptr<Case> make(const std::string& line) { return testing::case_from_line(registry, line); }
  std::string error(const std::string& line) { return testing::case_error_of(registry, line); }
  static std::string ragged(const std::string& extra) {
    return std::string("--routine ") + kRagged +
           " --batch_size 4 --s_qo 100 --s_kv 300 --num_qo_heads 16 --num_kv_heads 4 --head_dim_qk 128 "
           "--head_dim_vo 128 " + extra;
  }
  static std::string paged(const std::string& extra) {
    return std::string("--routine ") + kPaged +
           " --page_size 16 --batch_size 4 --s_qo 100 --s_kv 300 --num_qo_heads 16 --num_kv_heads 4 "
           "--head_dim_qk 128 --head_dim_vo 128 " + extra;
  }
};

TEST_F(PrefillValidation, TheSeedCommandsParse) {
  // seed 000 / 002 prefill commands, verbatim.
  for (const std::string line : {
           "--routine BatchPrefillWithPagedKVCacheWrapper --backends fa2 cudnn --page_size 16 --batch_size 16 "
           "--s_qo 4096 --s_kv 4096 --num_qo_heads 64 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 "
           "--random_actual_seq_len --verbose --refcheck --causal --no_cuda_graph",
           "--routine BatchPrefillWithRaggedKVCacheWrapper --backends fa2 cudnn cutlass --batch_size 16 --s_qo 4096 "
           "--s_kv 4096 --num_qo_heads 128 --num_kv_heads 128 --head_dim_qk 192 --head_dim_vo 128 --verbose "
           "--refcheck --causal --no_cuda_graph",
           "--routine BatchPrefillWithPagedKVCacheWrapper --backends fa2 cudnn --page_size 16 --batch_size 16 "
           "--s_qo 1024 --s_kv 1024 --num_qo_heads 8 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 "
           "--random_actual_seq_len --refcheck --causal --no_cuda_graph -vv",
           "--routine BatchPrefillWithRaggedKVCacheWrapper --backends fa2 fa3 cutlass cudnn --batch_size 16 "
           "--s_qo 1024 --s_kv 1024 --num_qo_heads 128 --num_kv_heads 128 --head_dim_qk 192 --head_dim_vo 128 "
           "--random_actual_seq_len -vv --refcheck --causal --q_dtype bfloat16 --kv_dtype bfloat16 "
           "--allow_output_mismatch --generate_repro_command --case_tag \"DeepSeek-R1\""}) {
    const auto c = make(line);
    EXPECT_GT(c->flops(), 0) << line;
    EXPECT_GT(c->bytes(), 0) << line;
  }
}

TEST_F(PrefillValidation, FormulasUseTheActualLengths) {
  for (const bool is_paged : {false, true}) {
    const std::string extra = "--random_actual_seq_len --causal --random_seed 9";
    const auto c = make(is_paged ? paged(extra) : ragged(extra));
    const PrefillLengths lens = make_prefill_lengths(4, 100, 300, true, 9);
    const AttentionSizes sizes{16, 4, 128, 128, true, 2, 2, 2};
    EXPECT_DOUBLE_EQ(c->flops(), attention_flops(sizes, lens.q, lens.kv));
    EXPECT_DOUBLE_EQ(c->bytes(), attention_bytes(sizes, lens.q, lens.kv));
    const auto columns = c->result_columns();
    ASSERT_EQ(columns.size(), 1u);
    EXPECT_EQ(columns[0].first, "avg_actual_seq_len");
    EXPECT_EQ(columns[0].second, std::to_string(std::accumulate(lens.q.begin(), lens.q.end(), 0) / 4));
  }
  // fp8 KV counts one byte per element.
  const auto fp8 = make(ragged("--kv_dtype fp8_e4m3 --q_dtype fp8_e4m3"));
  const std::vector<int32_t> q(4, 100), kv(4, 300);
  const AttentionSizes sizes{16, 4, 128, 128, false, 1, 1, 2};  // out: bfloat16 for fp8 q
  EXPECT_DOUBLE_EQ(fp8->bytes(), attention_bytes(sizes, q, kv));
}

TEST_F(PrefillValidation, TensorsAreTheReferencesShapes) {
  const auto r = make(ragged("--head_dim_qk 192"));
  const auto rt = r->tensors();
  ASSERT_GE(rt.size(), 5u);
  EXPECT_EQ(rt[0].name, "q");
  EXPECT_EQ(rt[0].shape, (std::vector<int64_t>{400, 16, 192}));
  EXPECT_EQ(rt[1].name, "k");
  EXPECT_EQ(rt[1].shape, (std::vector<int64_t>{1200, 4, 192}));
  EXPECT_EQ(rt[2].name, "v");
  EXPECT_EQ(rt[2].shape, (std::vector<int64_t>{1200, 4, 128}));
  EXPECT_EQ(rt[3].name, "qo_indptr");
  EXPECT_EQ(rt[4].name, "kv_indptr");
  const auto p = make(paged(""));
  const auto pt = p->tensors();
  ASSERT_GE(pt.size(), 2u);
  EXPECT_EQ(pt[1].name, "kv_cache");
  EXPECT_EQ(pt[1].shape, (std::vector<int64_t>{4 * 19, 2, 4, 16, 128}));  // ceil(300 / 16) pages per request
  EXPECT_EQ(pt[1].stride, (std::vector<int64_t>{2 * 16 * 4 * 128, 16 * 4 * 128, 128, 4 * 128, 1}));  // NHD
  const auto hnd = make(paged("--kv_layout HND"));
  EXPECT_EQ(hnd->tensors()[1].stride, (std::vector<int64_t>{2 * 4 * 16 * 128, 4 * 16 * 128, 16 * 128, 128, 1}));
}

TEST_F(PrefillValidation, RejectsWhatPrefillCannotBe) {
  EXPECT_NE(error(ragged("--s_qo 400")).find("--s_qo 400 is larger than --s_kv 300"), std::string::npos);
  EXPECT_NE(error(ragged("--num_kv_heads 5")).find("not a multiple of --num_kv_heads 5"), std::string::npos);
  EXPECT_NE(error(ragged("--head_dim_qk 96 --head_dim_vo 96")).find("prefill takes 64/64, 128/128, 256/256 or 192/128"),
            std::string::npos);
  EXPECT_NE(error(ragged("--head_dim_vo 64")).find("--head_dim_vo 64"), std::string::npos);
  EXPECT_NE(error(paged("--head_dim_qk 192")).find("192/128 is a ragged-KV shape"), std::string::npos);
  EXPECT_NE(error(paged("--page_size 0")).find("--page_size is required"), std::string::npos);
  EXPECT_NE(error(ragged("--out_dtype fp8_e4m3")).find("bfloat16 or float16 outputs"), std::string::npos);
  EXPECT_NE(error(ragged("--batch_size 0")).find("--batch_size must be in [1, 2^30]"), std::string::npos);
  EXPECT_NE(error(ragged("--s_qo 0")).find("--s_qo must be in [1, 2^30]"), std::string::npos);
  EXPECT_NE(error(ragged("--batch_size 100000 --s_kv 100000")).find("over 2^31 - 1 tokens"), std::string::npos);
  // A ragged case ignores --page_size; a paged one takes HND.
  EXPECT_NO_THROW((void)make(ragged("--page_size 0")));
  EXPECT_NO_THROW((void)make(paged("--kv_layout HND --page_size 1")));
}

TEST_F(PrefillValidation, BackendsAndTheirNames) {
  const Routine& r = *registry.find(kRagged);
  std::vector<std::string> names;
  for (const auto& b : r.backends()) names.emplace_back(b->name());
  EXPECT_EQ(names, (std::vector<std::string>{"fa2", "fa3", "fa2_tc", "cudnn", "flashinfer_fa3", "flashinfer_fa2"}));
  EXPECT_EQ(r.default_backends(), (std::vector<std::string>{"fa2"}));
  EXPECT_TRUE(r.has_auto());
  EXPECT_EQ(r.test_name(), "testBatchPrefillWithRaggedKVCacheWrapper");
  EXPECT_EQ(registry.find(kPaged)->test_name(), "testBatchPrefillWithPagedKVCacheWrapper");
  // Aliases resolve to their backend objects; a name kbench has not for prefill finds none.
  ASSERT_NE(r.find_backend("cudnn-native"), nullptr);
  EXPECT_EQ(r.find_backend("cudnn-native")->name(), "cudnn");
  ASSERT_NE(r.find_backend("flashinfer"), nullptr);
  EXPECT_EQ(r.find_backend("flashinfer")->name(), "flashinfer_fa3");
  EXPECT_EQ(r.find_backend("cutlass"), nullptr);
  const auto c = make(ragged(""));
  EXPECT_EQ(r.auto_candidates(*c), (std::vector<std::string>{"fa3", "fa2"}));
  // Paged: fa3 first on every page size (the grid's rule since session 24).
  const Routine& paged_routine = *registry.find(kPaged);
  const auto with_page = [&](int page) {
    std::string line = paged("");
    line.replace(line.find("--page_size 16"), 14, "--page_size " + std::to_string(page));
    return paged_routine.auto_candidates(*make(line));
  };
  for (const int page : {1, 12, 16, 48, 64}) {
    EXPECT_EQ(with_page(page), (std::vector<std::string>{"fa3", "fa2"})) << page;
  }
  // One query token a request: the decode kernel first, ragged or paged; it refuses longer queries.
  const std::string one_query = ragged("").replace(ragged("").find("--s_qo 100"), 10, "--s_qo 1");
  EXPECT_EQ(r.auto_candidates(*make(one_query)), (std::vector<std::string>{"fa2_tc", "fa3", "fa2"}));
  std::string one_query_paged = paged("--page_size 12");
  one_query_paged.replace(one_query_paged.find("--s_qo 100"), 10, "--s_qo 1");
  one_query_paged.replace(one_query_paged.find("--page_size 16"), 14, "");
  EXPECT_EQ(paged_routine.auto_candidates(*make(one_query_paged)), (std::vector<std::string>{"fa2_tc", "fa3", "fa2"}));
  const Support longer = r.find_backend("fa2_tc")->can_implement(*c);
  EXPECT_FALSE(longer.supported);
  EXPECT_NE(longer.reason.find("one query token per request"), std::string::npos) << longer.reason;
  // fa2 refuses fp8 inputs whatever the GPU, with the reason the user reads.
  const Support fp8_fa2 = r.find_backend("fa2")->can_implement(*make(ragged("--q_dtype fp8_e4m3 --kv_dtype fp8_e4m3")));
  EXPECT_FALSE(fp8_fa2.supported);
  EXPECT_NE(fp8_fa2.reason.find("fp8 runs on fa3"), std::string::npos);
}

using testing::run_kbench;

TEST(PrefillCommand, RoutineHelpListsTheAttentionFlags) {
  for (const char* routine : {kRagged, kPaged}) {
    const auto r = run_kbench(std::string("--routine ") + routine + " --help");
    EXPECT_EQ(r.exit_status, 0) << r.output;
    for (const char* flag : {"--s_qo INT", "--s_kv INT", "--causal", "--page_size INT", "--kv_layout TEXT",
                             "--random_actual_seq_len", "--head_dim_vo INT"}) {
      EXPECT_NE(r.output.find(flag), std::string::npos) << routine << " " << flag << "\n" << r.output;
    }
  }
  const auto top = run_kbench("--help");
  EXPECT_NE(top.output.find(kRagged), std::string::npos);
  EXPECT_NE(top.output.find(kPaged), std::string::npos);
}

TEST(PrefillCommand, BadFlagsExitTwoWithAClearMessage) {
  const std::string base = std::string("--routine ") + kPaged +
                           " --page_size 16 --batch_size 2 --s_kv 64 --num_qo_heads 4 --num_kv_heads 4 "
                           "--head_dim_qk 64 --head_dim_vo 64";
  struct Bad {
    std::string arguments;
    std::string message;
  };
  const Bad cases[] = {
      {base + " --kv_layout XND", "invalid choice 'XND'"},
      {base + " --backends fa2 flash", "unknown backend 'flash'"},
      {base + " --causal yes", "yes"},
      {base + " --s_qo 1.5", "'1.5' is not an integer"},
      {std::string("--routine ") + kRagged + " --batch_size 2 --num_qo_heads 4 --num_kv_heads 4 --head_dim_qk 64 "
                                             "--head_dim_vo 64",
       "missing required flag --s_kv"},
      {"--routine BatchPrefillWithRaggedKVCacheWraper --batch_size 1", "did you mean: BatchPrefillWithRaggedKVCacheWrapper"},
  };
  for (const Bad& c : cases) {
    const auto r = run_kbench(c.arguments);
    EXPECT_EQ(r.exit_status, 2) << c.arguments << "\n" << r.output;
    EXPECT_NE(r.output.find("[ERROR]"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.arguments << "\n" << r.output;
  }
}

TEST(PrefillCommand, ListShowsThePrefillBackends) {
  const auto r = run_kbench("--list");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  for (const char* routine : {kRagged, kPaged}) {
    for (const char* backend : {"fa2", "fa3", "cudnn", "flashinfer_fa3", "flashinfer_fa2", "auto"}) {
      bool found = false;
      std::istringstream lines(r.output);
      for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string name, listed;
        words >> name >> listed;
        found = found || (name == routine && listed == backend);
      }
      EXPECT_TRUE(found) << routine << " " << backend << "\n" << r.output;
    }
  }
}

}  // namespace
}  // namespace kbench
