// The split-K heuristic of kbench's wgmma GEMM (wgmma_gemm_k_splits, kernels/gemm/sm90): the issue's
// decode shapes on an H100's 132 SMs, no split where the tiles fill the SMs, and over a sweep of
// tiles, k-blocks and SM counts its invariants: one wave at most, every split at least one k-block,
// and the least of its cost (a split's k-blocks plus the splits summed), the smallest count on ties.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/gemm/sm90/wgmma_gemm.hpp"

namespace {

using kbench::kernels::gemm::sm90::wgmma_gemm_k_splits;

int64_t cost(int64_t k_blocks, int64_t splits) { return (k_blocks + splits - 1) / splits + splits; }

TEST(WgmmaGemmSplits, DecodeShapesOnAnH100) {
  // 64 x 128 tiles: n 2112 is 17 n-blocks, n 7168 56; k 7168 is 56 k-blocks (fp8), k 16384 128.
  EXPECT_EQ(wgmma_gemm_k_splits(17, 56, 132), 7);    // m <= 64, n 2112: 119 CTAs of 8 k-blocks
  EXPECT_EQ(wgmma_gemm_k_splits(34, 56, 132), 3);    // m 65..128, n 2112: 102 CTAs of 18-19
  EXPECT_EQ(wgmma_gemm_k_splits(56, 128, 132), 2);   // m <= 64, n 7168: 112 CTAs of 64
  EXPECT_EQ(wgmma_gemm_k_splits(112, 128, 132), 1);  // m 65..128, n 7168: 2 splits would be 2 waves
}

TEST(WgmmaGemmSplits, NoSplitWhereTheTilesFillTheSms) {
  EXPECT_EQ(wgmma_gemm_k_splits(132, 128, 132), 1);
  EXPECT_EQ(wgmma_gemm_k_splits(896, 128, 132), 1);  // 4096 x 7168 in 128 x 256 tiles
  EXPECT_EQ(wgmma_gemm_k_splits(0, 128, 132), 1);
}

TEST(WgmmaGemmSplits, ShortKIsSplitLittleOrNotAtAll) {
  EXPECT_EQ(wgmma_gemm_k_splits(1, 1, 132), 1);
  EXPECT_EQ(wgmma_gemm_k_splits(1, 2, 132), 1);    // 2 + 1 against 1 + 2: a tie, the smaller
  EXPECT_EQ(wgmma_gemm_k_splits(10, 9, 132), 3);   // 3 + 3
  EXPECT_EQ(wgmma_gemm_k_splits(1, 128, 132), 10);  // 13 + 10 (11 and 12 tie)
}

TEST(WgmmaGemmSplits, OneWaveAtMostAndTheLeastCost) {
  for (const int sms : {78, 114, 132}) {
    for (int64_t tiles = 1; tiles <= 150; ++tiles) {
      for (int64_t k_blocks = 1; k_blocks <= 300; k_blocks += 7) {
        const int splits = wgmma_gemm_k_splits(tiles, k_blocks, sms);
        ASSERT_GE(splits, 1);
        ASSERT_LE(splits, k_blocks);
        if (splits > 1) {
          ASSERT_LE(tiles * splits, sms) << tiles << " tiles, " << k_blocks << " k-blocks";
        }
        for (int64_t other = 1; other <= k_blocks && tiles * other <= sms; ++other) {
          ASSERT_TRUE(cost(k_blocks, splits) < cost(k_blocks, other) ||
                      (cost(k_blocks, splits) == cost(k_blocks, other) && splits <= other))
              << tiles << " tiles, " << k_blocks << " k-blocks, " << sms << " SMs: " << splits << " splits, not "
              << other;
        }
      }
    }
  }
}

}  // namespace
