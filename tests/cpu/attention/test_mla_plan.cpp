// The MLA kernels' plans on the host (kernels/attention/mla/mla_split.hpp): fa3's balanced schedule
// for unequal lengths (every unit's keys covered once, in order, by segments no part overfills;
// slots and split counts as the kernel and the merge read them), and the uniform plan kept where the
// lengths are equal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/attention/mla/mla_fa2.hpp"
#include "kernels/attention/mla/mla_fa3.hpp"
#include "kernels/attention/mla/mla_split.hpp"

namespace kbench {
namespace {

constexpr int kSms = 132;  // an H100 SXM
constexpr int kTile = 64;  // fa3's KV tile

kernels::MlaParams mla_params(int batch, int s_qo, int heads) {
  kernels::MlaParams p;
  p.batch = batch;
  p.s_qo = s_qo;
  p.num_heads = heads;
  p.sm_scale = 0.1f;
  return p;
}

std::vector<int32_t> random_lengths(int batch, int max_len, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> lens(batch);
  for (auto& len : lens) len = 1 + static_cast<int32_t>(rng() % max_len);
  return lens;
}

// Every unit's segments cover [0, kv_len) in order, with slots 0.. (or -1 alone), unit_splits their
// count; parts are consecutive, none empty, at most sm_count; num_splits the most of a unit.
void expect_schedule_covers(const kernels::MlaParams& p, const kernels::MlaPlan& plan, std::span<const int32_t> lens,
                            int sm_count) {
  ASSERT_TRUE(plan.balanced());
  const int units = p.batch * plan.row_blocks;
  ASSERT_EQ(static_cast<int>(plan.unit_splits.size()), units);
  ASSERT_GE(plan.part_begin.size(), 2u);
  EXPECT_LE(static_cast<int>(plan.part_begin.size()) - 1, sm_count);
  EXPECT_EQ(plan.part_begin.front(), 0);
  EXPECT_EQ(plan.part_begin.back(), static_cast<int32_t>(plan.segments.size()));
  for (std::size_t i = 1; i < plan.part_begin.size(); ++i) EXPECT_LT(plan.part_begin[i - 1], plan.part_begin[i]);
  std::vector<int32_t> next_key(units, 0), next_slot(units, 0);
  int most = 1;
  for (const kernels::MlaSegment& s : plan.segments) {
    ASSERT_GE(s.unit, 0);
    ASSERT_LT(s.unit, units);
    const int32_t len = lens[s.unit / plan.row_blocks];
    EXPECT_EQ(s.k_begin, next_key[s.unit]) << "unit " << s.unit;
    EXPECT_EQ(s.k_begin % kTile, 0);
    EXPECT_GT(s.k_end, s.k_begin);
    EXPECT_LE(s.k_end, len);
    next_key[s.unit] = s.k_end;
    if (plan.unit_splits[s.unit] == 1) {
      EXPECT_EQ(s.slot, -1);
    } else {
      EXPECT_EQ(s.slot, next_slot[s.unit]++);
    }
    most = std::max(most, plan.unit_splits[s.unit]);
  }
  for (int u = 0; u < units; ++u) EXPECT_EQ(next_key[u], lens[u / plan.row_blocks]) << "unit " << u;
  EXPECT_EQ(plan.num_splits, most);
  EXPECT_EQ(plan.split_keys, kTile);
}

TEST(MlaFa3Plan, EqualLengthsKeepTheUniformGrid) {
  const std::vector<int32_t> lens(128, 8192);
  const kernels::MlaPlan plan = kernels::plan_mla_fa3(mla_params(128, 1, 16), lens, kSms);
  EXPECT_FALSE(plan.balanced());
  EXPECT_EQ(plan.num_splits, 1);
  const kernels::MlaPlan one = kernels::plan_mla_fa3(mla_params(1, 1, 16), std::vector<int32_t>{5000}, kSms);
  EXPECT_FALSE(one.balanced());
  EXPECT_GT(one.num_splits, 1);
}

// No part over the mean by more than a segment and a tile: its tiles plus `segment_tiles` a segment
// (the kernel's in fa3's cost model: for 16 query rows or fewer, 3.2 for bf16 KV on pages of whole
// tiles, 2 on gathered pages, 5 for fp8 KV). The mean counts
// one segment a request, so a part continuing a request may pass it by one segment.
void expect_parts_near_the_mean(const kernels::MlaPlan& plan, std::span<const int32_t> lens, double segment_tiles) {
  double total = 0;
  for (const int32_t len : lens) total += (len + kTile - 1) / kTile + segment_tiles;
  const double mean = total / kSms;
  for (std::size_t part = 0; part + 1 < plan.part_begin.size(); ++part) {
    double load = 0;
    for (int i = plan.part_begin[part]; i < plan.part_begin[part + 1]; ++i) {
      const kernels::MlaSegment& s = plan.segments[i];
      load += (s.k_end - s.k_begin + kTile - 1) / kTile + segment_tiles;
    }
    EXPECT_LE(load, mean + segment_tiles + 1) << "part " << part;
  }
}

TEST(MlaFa3Plan, RandomLengthsGetABalancedSchedule) {
  kernels::MlaParams p = mla_params(128, 1, 16);
  const std::vector<int32_t> lens = random_lengths(128, 8192, 3);
  const kernels::MlaPlan plan = kernels::plan_mla_fa3(p, lens, kSms);
  expect_schedule_covers(p, plan, lens, kSms);
  expect_parts_near_the_mean(plan, lens, 3.2);
  // The workspace holds the partials and the schedule after them.
  EXPECT_GE(plan.workspace_bytes(p), plan.segments.size() * sizeof(kernels::MlaSegment));
  // Gathered pages (16 keys): a tile takes about twice as long, a segment 2 of them.
  p.page_size = 16;
  const kernels::MlaPlan gathered = kernels::plan_mla_fa3(p, lens, kSms);
  expect_schedule_covers(p, gathered, lens, kSms);
  expect_parts_near_the_mean(gathered, lens, 2.0);
  p.page_size = 64;
  // fp8 KV (the transposed kernel): a segment costs 5 tiles' time, fewer segments a part.
  p.kv_dtype = DType::fp8_e4m3;
  const kernels::MlaPlan fp8 = kernels::plan_mla_fa3(p, lens, kSms);
  expect_schedule_covers(p, fp8, lens, kSms);
  expect_parts_near_the_mean(fp8, lens, 5.0);
}

TEST(MlaFa3Plan, SeveralRowBlocksAndFewSms) {
  const kernels::MlaParams p = mla_params(9, 2, 128);  // 256 rows: 4 row blocks of 64
  const std::vector<int32_t> lens{2, 700, 4099, 130, 64, 65, 2000, 3, 1500};
  const kernels::MlaPlan plan = kernels::make_mla_balanced_schedule(p, lens, 64, kTile, 20);  // 5 runs of 4
  EXPECT_EQ(plan.row_blocks, 4);
  expect_schedule_covers(p, plan, lens, 20);
  EXPECT_GT(plan.num_splits, 1);
  // Fewer SMs than row blocks: one group, every request whole.
  const kernels::MlaPlan one = kernels::make_mla_balanced_schedule(p, lens, 64, kTile, 3);
  expect_schedule_covers(p, one, lens, 4);
  EXPECT_EQ(one.num_splits, 1);
}

// The row blocks of a request take the same keys side by side (a 64 x 4-token x 128-head batch of
// random lengths: 8 row blocks a request): the parts come in runs of row_blocks, part r of a run
// holding the run's segments for row block r.
TEST(MlaFa3Plan, RowBlocksOfARequestTakeTheSameKeysSideBySide) {
  const kernels::MlaParams p = mla_params(64, 4, 128);
  const std::vector<int32_t> lens = random_lengths(64, 8192, 5);
  const kernels::MlaPlan plan = kernels::plan_mla_fa3(p, lens, kSms);
  ASSERT_EQ(plan.row_blocks, 8);
  expect_schedule_covers(p, plan, lens, kSms);
  const int parts = static_cast<int>(plan.part_begin.size()) - 1;
  ASSERT_EQ(parts % plan.row_blocks, 0);
  EXPECT_EQ(parts, kSms / plan.row_blocks * plan.row_blocks);
  for (int run = 0; run < parts; run += plan.row_blocks) {
    const int first = plan.part_begin[run], count = plan.part_begin[run + 1] - first;
    for (int block = 0; block < plan.row_blocks; ++block) {
      const int begin = plan.part_begin[run + block];
      ASSERT_EQ(plan.part_begin[run + block + 1] - begin, count) << "part " << run + block;
      for (int i = 0; i < count; ++i) {
        const kernels::MlaSegment& s = plan.segments[begin + i];
        const kernels::MlaSegment& lead = plan.segments[first + i];
        EXPECT_EQ(s.unit, lead.unit + block);
        EXPECT_EQ(s.unit % plan.row_blocks, block);
        EXPECT_EQ(s.k_begin, lead.k_begin);
        EXPECT_EQ(s.k_end, lead.k_end);
        EXPECT_EQ(s.slot, lead.slot);
      }
    }
  }
}

TEST(MlaFa2Plan, NeverBalanced) {
  const std::vector<int32_t> lens = random_lengths(128, 8192, 3);
  EXPECT_FALSE(kernels::plan_mla_fa2(mla_params(128, 1, 16), lens, kSms).balanced());
}

}  // namespace
}  // namespace kbench
