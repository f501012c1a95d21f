// The split-K heuristic of kbench's wgmma GEMM (wgmma_gemm_k_splits, kernels/gemm/sm90): the issue's
// decode shapes on an H100's 132 SMs (the counts its split sweep found fastest), no split where the
// tiles fill the SMs or B's panels already make enough streams, and over a sweep of panels, tiles,
// k-blocks, SM counts and streams its invariants: one wave at most, every split at least one k-block,
// and the fewest splits that reach the streams of B where the caps allow; the streams' scaling with
// the HBM's bandwidth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "kernels/gemm/sm90/wgmma_gemm.hpp"

namespace {

using kbench::kernels::gemm::sm90::kSplitKBStreams;
using kbench::kernels::gemm::sm90::kSplitKReferenceBandwidth;
using kbench::kernels::gemm::sm90::wgmma_gemm_b_streams;
using kbench::kernels::gemm::sm90::wgmma_gemm_k_splits;

TEST(WgmmaGemmSplits, DecodeShapesOnAnH100) {
  // 64 x 128 tiles: n 2112 is 17 panels of B, n 7168 56; k 7168 is 56 k-blocks (fp8), k 16384 128.
  EXPECT_EQ(wgmma_gemm_k_splits(17, 17, 56, 132), 3);     // m <= 64, n 2112: 51 CTAs of 18-19 k-blocks
  EXPECT_EQ(wgmma_gemm_k_splits(17, 34, 56, 132), 3);     // m 65..128, n 2112: 102 CTAs
  EXPECT_EQ(wgmma_gemm_k_splits(56, 56, 128, 132), 1);    // m <= 64, n 7168: 56 streams already
  EXPECT_EQ(wgmma_gemm_k_splits(56, 112, 128, 132), 1);   // m 65..128, n 7168
}

TEST(WgmmaGemmSplits, NoSplitWhereTheTilesFillTheSms) {
  EXPECT_EQ(wgmma_gemm_k_splits(4, 132, 128, 132), 1);
  EXPECT_EQ(wgmma_gemm_k_splits(28, 896, 128, 132), 1);  // 4096 x 7168 in 128 x 256 tiles
  EXPECT_EQ(wgmma_gemm_k_splits(0, 0, 128, 132), 1);
}

TEST(WgmmaGemmSplits, CappedByTheWaveAndByK) {
  EXPECT_EQ(wgmma_gemm_k_splits(1, 1, 1, 132), 1);      // one k-block: nothing to split
  EXPECT_EQ(wgmma_gemm_k_splits(1, 1, 20, 132), 20);    // 48 wanted, 20 k-blocks
  EXPECT_EQ(wgmma_gemm_k_splits(1, 1, 128, 132), 48);
  EXPECT_EQ(wgmma_gemm_k_splits(4, 100, 128, 132), 1);  // 12 wanted, but 2 would be two waves
}

TEST(WgmmaGemmSplits, OneWaveAtMostAndTheFewestThatMakeTheStreams) {
  for (const int64_t streams : {kSplitKBStreams, int64_t{69}}) {
    for (const int sms : {78, 114, 132}) {
      for (int64_t panels = 1; panels <= 80; ++panels) {
        for (int64_t tiles = panels; tiles <= 150; tiles += panels) {
          for (int64_t k_blocks = 1; k_blocks <= 300; k_blocks += 7) {
            const int splits = wgmma_gemm_k_splits(panels, tiles, k_blocks, sms, streams);
            ASSERT_GE(splits, 1);
            ASSERT_LE(splits, std::max<int64_t>(k_blocks, 1));
            if (splits > 1) {
              ASSERT_LE(tiles * splits, sms) << tiles << " tiles";
              ASSERT_LT(panels * (splits - 1), streams) << "one split fewer would do";
            }
            const bool capped = tiles * (splits + 1) > sms || splits == k_blocks || tiles >= sms;
            ASSERT_TRUE(panels * splits >= streams || capped)
                << panels << " panels, " << tiles << " tiles, " << k_blocks << " k-blocks: " << splits;
          }
        }
      }
    }
  }
}

// The streams scale with the HBM's bandwidth: the H100's 48, an H200's (3201 MHz x 6016 bits, as the
// device reports them) 69, and the decode shapes' splits on an H200's 132 SMs (the ones session 32's
// call 7 measured fastest, or within 1%: n 2112 at m 64 in 5 splits, 12.4 us in call 8, between 4's
// 12.9 and 6's 12.7).
TEST(WgmmaGemmSplits, StreamsScaleWithTheMemorysBandwidth) {
  EXPECT_EQ(wgmma_gemm_b_streams(kSplitKReferenceBandwidth), kSplitKBStreams);
  EXPECT_EQ(wgmma_gemm_b_streams(2.0 * 2619e6 * 5120 / 8), 48);  // H100 SXM
  EXPECT_EQ(wgmma_gemm_b_streams(2.0 * 3201e6 * 6016 / 8), 69);  // H200
  EXPECT_EQ(wgmma_gemm_b_streams(0.0), kSplitKBStreams);          // no query: the H100's
  EXPECT_EQ(wgmma_gemm_b_streams(1e9), 1);
  EXPECT_EQ(wgmma_gemm_k_splits(17, 17, 56, 132, 69), 5);    // m <= 64, n 2112
  EXPECT_EQ(wgmma_gemm_k_splits(17, 34, 56, 132, 69), 3);    // m 65..128, n 2112: one wave
  EXPECT_EQ(wgmma_gemm_k_splits(56, 56, 128, 132, 69), 2);   // m <= 64, n 7168
  EXPECT_EQ(wgmma_gemm_k_splits(56, 112, 128, 132, 69), 1);  // m 65..128, n 7168: one wave
}

}  // namespace
