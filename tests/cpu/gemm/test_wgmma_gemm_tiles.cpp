// The tile heuristic of kbench's wgmma GEMM (wgmma_gemm_tile_shape, kernels/gemm/sm90) on an H100's
// 132 SMs: the largest tiles that fill the SMs; at decode-sized m, groupwise 128 x 128 tiles where
// 128 rows are not padding and give a quarter of the SMs a tile, else the smallest; groups of 64 rows
// or fewer, the smallest; FP4 weights on groups of up to 128 rows, the swapped FP4 kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "kernels/gemm/sm90/wgmma_gemm.hpp"

namespace {

namespace wg = kbench::kernels::gemm::sm90;

constexpr int kSms = 132;

wg::WgmmaGemmParams shape(int64_t m, int64_t n, wg::GemmScaling scaling = wg::GemmScaling::groupwise) {
  wg::WgmmaGemmParams p;
  p.scaling = scaling;
  p.groups = 1;
  p.rows_per_group = m;
  p.rows = m;
  p.n = n;
  p.k = 7168;
  return p;
}

::testing::AssertionResult tiles_are(const wg::WgmmaGemmParams& p, int block_m, int block_n) {
  const wg::WgmmaTileShape t = wg::wgmma_gemm_tile_shape(p, kSms);
  if (t.block_m == block_m && t.block_n == block_n) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "m " << p.rows << ", n " << p.n << ": " << t.block_m << " x " << t.block_n
                                       << ", expected " << block_m << " x " << block_n;
}

TEST(WgmmaGemmTiles, LargestThatFillTheSms) {
  EXPECT_TRUE(tiles_are(shape(4096, 7168), 128, 256));  // 896 tiles
  EXPECT_TRUE(tiles_are(shape(2048, 2048), 128, 128));  // 128 x 256: 128 tiles
  EXPECT_TRUE(tiles_are(shape(512, 7168), 128, 128));   // 128 x 256: 112 tiles
  EXPECT_TRUE(tiles_are(shape(4096, 7168, wg::GemmScaling::per_tensor), 128, 256));
  EXPECT_TRUE(tiles_are(shape(512, 7168, wg::GemmScaling::per_tensor), 64, 128));  // no 128 x 128 instance
}

TEST(WgmmaGemmTiles, DecodeTakesMoreRowsOnlyWhereTheyAreNotPadding) {
  EXPECT_TRUE(tiles_are(shape(128, 7168), 128, 128));  // 56 tiles of 128 x 128: B read once
  EXPECT_TRUE(tiles_are(shape(100, 7168), 128, 128));
  EXPECT_TRUE(tiles_are(shape(64, 7168), 64, 128));    // 128 rows would be half padding
  EXPECT_TRUE(tiles_are(shape(128, 2112), 64, 128));   // 17 tiles of 128 x 128: under a quarter of the SMs
  EXPECT_TRUE(tiles_are(shape(64, 2112), 64, 128));
  EXPECT_TRUE(tiles_are(shape(128, 7168, wg::GemmScaling::none), 64, 128));  // bf16: no 128 x 128 instance
}

TEST(WgmmaGemmTiles, GroupsOf64RowsOrFewerTakeTheSmallest) {
  wg::WgmmaGemmParams mla = shape(1, 1024, wg::GemmScaling::per_tensor);  // bmm_fp8 256 x 1 x 1024 x 7168
  mla.groups = 256;
  mla.rows = 256;
  EXPECT_TRUE(tiles_are(mla, 64, 128));  // 128 x 256 tiles would fill the SMs (1024), with 127 rows padding
  wg::WgmmaGemmParams sample = shape(4, 1024, wg::GemmScaling::per_tensor);  // the reference's bmm_fp8 line
  sample.groups = 64;
  sample.rows = 256;
  EXPECT_TRUE(tiles_are(sample, 64, 128));
  wg::WgmmaGemmParams batched = shape(65, 7168, wg::GemmScaling::none);  // 65 rows: two 64-row blocks
  batched.groups = 8;
  batched.rows = 8 * 65;
  EXPECT_TRUE(tiles_are(batched, 128, 256));
}

TEST(WgmmaGemmTiles, DeviceGroupsAtDecodeTakeTheSmallest) {
  wg::WgmmaGemmParams p = shape(0, 7168);
  p.groups = 256;
  p.rows_per_group = 0;
  p.rows = 128 * 8;  // DeepSeek-V3 at 128 tokens: 4 rows an expert on average
  EXPECT_TRUE(tiles_are(p, 64, 128));
}

// weight_fp4 swaps its operands (the weights on wgmma's M) where B's scales are swizzled_128x4 and k
// a multiple of 256: 16 rows of A a unit where the groups hold 16 rows or fewer (equal groups;
// device groups on average), 64 up to 128 rows, else the tiled kernel.
TEST(WgmmaGemmTiles, Fp4WeightsOnFewRowsSwapTheOperands) {
  wg::WgmmaGemmParams p = shape(0, 4096, wg::GemmScaling::weight_fp4);
  p.groups = 256;
  p.rows_per_group = 0;
  p.b_sf_layout = kbench::kernels::quant::SfLayout::swizzled_128x4;
  p.b_sf_group_stride = 4096 * 7168 / 16;
  for (const auto& [tokens, rows] : {std::pair{128, 16}, {512, 16}, {513, 64}, {4096, 64}, {4097, 0}, {16384, 0}}) {
    p.rows = tokens * 8;  // DeepSeek-V3's FC1: top-8 of 256 experts, tokens / 32 rows an expert on average
    EXPECT_EQ(wg::wgmma_gemm_swapped_fp4_rows(p), rows) << tokens << " tokens";
  }

  wg::WgmmaGemmParams equal = p;
  equal.groups = 4;
  for (const auto& [rows_per_group, rows] : {std::pair{16, 16}, {17, 64}, {128, 64}, {129, 0}}) {
    equal.rows_per_group = rows_per_group;
    equal.rows = 4 * rows_per_group;
    EXPECT_EQ(wg::wgmma_gemm_swapped_fp4_rows(equal), rows) << rows_per_group << " rows a group";
  }

  wg::WgmmaGemmParams limits = p;
  limits.rows = 128 * 8;
  limits.k = 7168 + 128;  // not whole 256-deep stages
  EXPECT_EQ(wg::wgmma_gemm_swapped_fp4_rows(limits), 0);
  limits.k = 7168;
  limits.b_sf_layout = kbench::kernels::quant::SfLayout::linear;
  EXPECT_EQ(wg::wgmma_gemm_swapped_fp4_rows(limits), 0);
  limits.b_sf_layout = kbench::kernels::quant::SfLayout::swizzled_128x4;
  limits.scaling = wg::GemmScaling::block_fp4;
  EXPECT_EQ(wg::wgmma_gemm_swapped_fp4_rows(limits), 0);
}

}  // namespace
