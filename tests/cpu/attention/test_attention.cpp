#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "core/cli.hpp"
#include "core/shell_words.hpp"
#include "routines/attention/attention_formulas.hpp"
#include "routines/attention/paged_kv_layout.hpp"
#include "routines/builtin_routines.hpp"

#include "case_from_line.hpp"

namespace kbench {
namespace {

TEST(PagedKvLayout, FollowsTheReferenceRules) {
  const std::vector<int32_t> lens = {1, 16, 17, 0, 33};
  const PagedKvLayout l = make_paged_kv_layout(lens, 40, 16, 42);
  EXPECT_EQ(l.pages_per_request, 3);  // ceil(40 / 16)
  EXPECT_EQ(l.total_pages, 15);
  EXPECT_EQ(l.indptr, (std::vector<int32_t>{0, 1, 2, 4, 4, 7}));
  EXPECT_EQ(l.last_page_len, (std::vector<int32_t>{1, 16, 1, 0, 1}));
  ASSERT_EQ(l.block_table.size(), 15u);
  // Every page belongs to exactly one request, and a request uses the first pages it owns.
  const std::set<int32_t> owned(l.block_table.begin(), l.block_table.end());
  EXPECT_EQ(owned.size(), 15u);
  EXPECT_EQ(*owned.rbegin(), 14);
  for (int b = 0; b < 5; ++b) {
    for (int32_t i = l.indptr[b]; i < l.indptr[b + 1]; ++i) {
      EXPECT_EQ(l.indices[static_cast<std::size_t>(i)], l.block_table[static_cast<std::size_t>(b * 3 + i - l.indptr[b])]);
    }
  }
  // Shuffled: the pages are not simply in order.
  std::vector<int32_t> in_order(15);
  std::iota(in_order.begin(), in_order.end(), 0);
  EXPECT_NE(l.block_table, in_order);
  // The same seed gives the same layout.
  EXPECT_EQ(make_paged_kv_layout(lens, 40, 16, 42).block_table, l.block_table);
}

TEST(PagedKvLayout, PageSizeOneAndRandomLengths) {
  const auto lens = make_sequence_lengths(64, 100, true, 7);
  EXPECT_TRUE(std::all_of(lens.begin(), lens.end(), [](int32_t v) { return v >= 1 && v <= 100; }));
  EXPECT_GT(std::set<int32_t>(lens.begin(), lens.end()).size(), 10u);
  EXPECT_EQ(make_sequence_lengths(64, 100, true, 7), lens);
  EXPECT_EQ(make_sequence_lengths(3, 100, false, 7), (std::vector<int32_t>{100, 100, 100}));
  const PagedKvLayout l = make_paged_kv_layout(lens, 100, 1, 3);
  EXPECT_EQ(l.indptr.back(), std::accumulate(lens.begin(), lens.end(), 0));
  EXPECT_TRUE(std::all_of(l.last_page_len.begin(), l.last_page_len.end(), [](int32_t v) { return v == 1; }));
}

TEST(AttentionFormulas, MatchCompat) {
  const AttentionSizes s{64, 8, 128, 128, false, 2, 2, 2};
  const std::vector<int32_t> q = {1, 1};
  const std::vector<int32_t> k = {8192, 4096};
  EXPECT_DOUBLE_EQ(attention_flops(s, q, k), 2.0 * 64 * 256 * (8192 + 4096));
  EXPECT_DOUBLE_EQ(attention_bytes(s, q, k), 2 * 64 * 128 * 2 + (8192 + 4096) * 8 * 256 * 2.0 + 2 * 64 * 128 * 2);
  AttentionSizes causal{16, 16, 192, 128, true, 2, 2, 2};
  const std::vector<int32_t> qq = {100, 10};
  const std::vector<int32_t> kk = {100, 50};
  EXPECT_DOUBLE_EQ(attention_flops(causal, qq, kk), 16.0 * 320 * (100 * (200 - 100) + 10 * (100 - 10)));
  AttentionSizes fp8 = s;
  fp8.kv_bytes = 1;
  fp8.out_bytes = 0.5;
  EXPECT_DOUBLE_EQ(attention_bytes(fp8, q, k), 2 * 64 * 128 * 2 + (8192 + 4096) * 8 * 256 * 1.0 + 2 * 64 * 128 * 0.5);
}

class DecodeValidation : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();
  const Routine& decode = *registry.find("BatchDecodeWithPagedKVCacheWrapper");
  static constexpr const char* kBase =
      "--routine BatchDecodeWithPagedKVCacheWrapper --page_size 16 --batch_size 4 --s_kv 100 --num_qo_heads 64 "
      "--num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128";
  std::unique_ptr<Case> make(const std::string& extra) {
    return testing::case_from_line(registry, std::string(kBase) + " " + extra);
  }
  std::string error(const std::string& extra) { return testing::case_error_of(registry, std::string(kBase) + " " + extra); }
};

TEST_F(DecodeValidation, TheSeedCommandsParse) {
  // seed 000 / 001 decode commands, verbatim.
  for (const std::string line : {
           "--routine BatchDecodeWithPagedKVCacheWrapper --backends fa2 fa2_tc trtllm cudnn --page_size 16 "
           "--batch_size 16 --s_qo 1 --s_kv 8192 --num_qo_heads 64 --num_kv_heads 8 --head_dim_qk 128 "
           "--head_dim_vo 128 --random_actual_seq_len --verbose --refcheck",
           "--routine BatchDecodeWithPagedKVCacheWrapper --backends fa2 fa2_tc cudnn --page_size 16 --batch_size 32 "
           "--s_qo 1 --s_kv 2048 --num_qo_heads 32 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 "
           "--q_dtype bfloat16 --kv_dtype bfloat16 --num_iters 30 --dry_run_iters 5 --refcheck -vv"}) {
    const auto words = split_shell_words(line);
    const auto c = decode.make_case(parse_case(words, registry));
    EXPECT_GT(c->flops(), 0) << line;
  }
}

TEST_F(DecodeValidation, FormulasUseTheActualLengths) {
  const auto c = make("--kv_dtype fp8_e4m3");
  EXPECT_DOUBLE_EQ(c->flops(), 2.0 * 64 * 256 * 4 * 100);
  EXPECT_DOUBLE_EQ(c->bytes(), 4 * 64 * 128 * 2 + 4 * 100 * 8 * 256 * 1.0 + 4 * 64 * 128 * 2);
}

TEST_F(DecodeValidation, RejectsWhatDecodeCannotBe) {
  EXPECT_NE(error("--s_qo 2").find("--s_qo must be 1"), std::string::npos);
  EXPECT_NE(error("--head_dim_vo 64").find("--head_dim_vo"), std::string::npos);
  EXPECT_NE(error("--num_kv_heads 7").find("not a multiple"), std::string::npos);
  EXPECT_NE(error("--page_size 0").find("--page_size is required"), std::string::npos);
  EXPECT_NE(error("--batch_size 0").find("--batch_size must be in [1, 2^30]"), std::string::npos);
  EXPECT_NE(error("--batch_size 100000 --s_kv 100000000").find("over 2^40"), std::string::npos);
}

// 65536 x 65536 one-token pages overflowed int in the page count and crashed in vector::insert;
// 65536 x 32768 threw "vector larger than max_size()". Both are refused with the reason.
TEST_F(DecodeValidation, PageCountsBeyondInt32AreRefused) {
  for (const char* s_kv : {"65536", "32768"}) {
    const std::string line = std::string("--routine BatchDecodeWithPagedKVCacheWrapper --page_size 1 --batch_size 65536 "
                                         "--s_kv ") + s_kv + " --num_qo_heads 1 --num_kv_heads 1 --head_dim_qk 128 --head_dim_vo 128";
    const std::string error = testing::case_error_of(registry, line);
    EXPECT_NE(error.find("over 2^31 - 1 (page ids are int32)"), std::string::npos) << error;
  }
}

// 2^28 one-token pages fit int32 but took the fuzzer minutes and gigabytes in the host page table.
TEST_F(DecodeValidation, HostPageTablesBeyond2To25AreRefused) {
  const std::string line = "--routine BatchDecodeWithPagedKVCacheWrapper --page_size 1 --batch_size 65536 --s_kv 4096 "
                           "--num_qo_heads 1 --num_kv_heads 1 --head_dim_qk 128 --head_dim_vo 128";
  const std::string error = testing::case_error_of(registry, line);
  EXPECT_NE(error.find("over kbench's 2^25"), std::string::npos) << error;
}

TEST_F(DecodeValidation, BaselineReportHasTheSeedColumns) {
  const auto words = split_shell_words(std::string(kBase) + " --kv_dtype fp8_e4m3 --q_dtype fp8_e4m3 --kv_layout HND");
  const auto report = decode.baseline_report(parse_case(words, registry));
  std::vector<std::string> columns;
  for (const auto& [c, v] : report) columns.push_back(c);
  EXPECT_EQ(columns, (std::vector<std::string>{"q_dtype", "kv_cache_dtype", "output_dtype", "block_size",
                                                "num_kv_heads", "head_size", "max_seq_len"}));
  EXPECT_EQ(report[0].second, "torch.float8_e4m3fn");
  EXPECT_EQ(report[2].second, "torch.bfloat16");  // fp8 q writes bf16 unless told
  EXPECT_EQ(report[6].second, "100");
}

}  // namespace
}  // namespace kbench
