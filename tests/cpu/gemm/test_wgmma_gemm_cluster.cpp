// The cluster heuristic of kbench's wgmma GEMM (wgmma_gemm_cluster, kernels/gemm/sm90): clusters of 2
// (B multicast) for 128 x 256 tiles of the issue's large shapes, never for 64 x 128 tiles, split-K or
// FP4, and only where pairing m-blocks pads at most 1/9 of the tiles.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/gemm/sm90/wgmma_gemm.hpp"

namespace {

namespace wg = kbench::kernels::gemm::sm90;

wg::WgmmaGemmParams equal_groups(int groups, int64_t rows_per_group, wg::GemmScaling scaling = wg::GemmScaling::none) {
  wg::WgmmaGemmParams p;
  p.scaling = scaling;
  p.groups = groups;
  p.rows_per_group = rows_per_group;
  p.rows = groups * rows_per_group;
  return p;
}

wg::WgmmaGemmParams device_groups(int groups, int64_t rows) {
  wg::WgmmaGemmParams p;
  p.scaling = wg::GemmScaling::groupwise;
  p.groups = groups;
  p.rows = rows;
  return p;
}

TEST(WgmmaGemmCluster, TheIssuesLargeShapesPair) {
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 8192), 128, 256, 1), 2);  // mm_bf16 8192^3
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 4096, wg::GemmScaling::groupwise), 128, 256, 1), 2);
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 4096, wg::GemmScaling::per_tensor), 128, 256, 1), 2);
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(8, 1024), 128, 256, 1), 2);  // bmm_bf16 8 x 1024
  EXPECT_EQ(wg::wgmma_gemm_cluster(device_groups(8, 8192), 128, 256, 1), 2);  // group GEMM 8 x 1024
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 2048, wg::GemmScaling::groupwise), 128, 128, 1), 2);
}

TEST(WgmmaGemmCluster, OnlyUnsplitWideTilesOfSixteenBitOrFp8Operands) {
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 8192), 64, 128, 1), 1);
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 8192), 128, 128, 1), 1);  // 128 x 128: groupwise only
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 8192), 128, 256, 3), 1);
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 8192, wg::GemmScaling::block_fp4), 128, 256, 1), 1);
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 8192, wg::GemmScaling::weight_fp4), 128, 256, 1), 1);
}

TEST(WgmmaGemmCluster, PairsOnlyWherePaddingIsSmall) {
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 129), 128, 256, 1), 2);   // 2 m-blocks
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(1, 300), 128, 256, 1), 1);   // 3: a third padded
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(3, 100), 128, 256, 1), 1);   // 1 each
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(2, 1025), 128, 256, 1), 2);  // 9 each: 1/10 padded
  EXPECT_EQ(wg::wgmma_gemm_cluster(equal_groups(2, 833), 128, 256, 1), 1);   // 7 each: 1/8 padded
  // Device groups: 8 m-blocks a group on average or more (DeepSeek-V3's experts at 16384 tokens
  // hold 512 rows on average, 4 m-blocks: unpaired).
  EXPECT_EQ(wg::wgmma_gemm_cluster(device_groups(256, 16384 * 8), 128, 256, 1), 1);
  EXPECT_EQ(wg::wgmma_gemm_cluster(device_groups(8, 8191), 128, 256, 1), 1);
  EXPECT_EQ(wg::wgmma_gemm_cluster(device_groups(0, 8192), 128, 256, 1), 1);
}

}  // namespace
