// The groupwise FP8 operands' rules (kernels/gemm/groupwise_fp8.hpp) against the host reference
// (src/routines/gemm/gemm_reference.cpp) and the facts of ../shared/spec/gemm.md: the scale is the
// smallest power of two at or above max(amax, 1e-4) / 448, a block's largest element lands at or
// just below e4m3's 448, the layouts place every block once, and the reference GEMM reads each
// block's scale where the layout puts it, B's last block partial where n is not a multiple of 128.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "kernels/gemm/groupwise_fp8.hpp"
#include "routines/gemm/gemm_reference.hpp"
#include "routines/quantization/quant_reference.hpp"

namespace kbench {
namespace {

namespace kg = kernels::gemm;
namespace ref = gemm_reference;

TEST(GroupwiseFp8, ScaleIsTheSmallestPowerOfTwoAtOrAboveAmaxOver448) {
  EXPECT_EQ(kg::groupwise_scale(448.0f), 1.0f);
  EXPECT_EQ(kg::groupwise_scale(std::nextafter(448.0f, 1e9f)), 2.0f);
  EXPECT_EQ(kg::groupwise_scale(224.0f), 0.5f);
  EXPECT_EQ(kg::groupwise_scale(0.0f), std::ldexp(1.0f, -22));  // 1e-4 / 448 = 2.23e-7
  EXPECT_EQ(kg::groupwise_scale(1e-30f), std::ldexp(1.0f, -22));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-20.0f, 30.0f);
  for (int i = 0; i < 100000; ++i) {
    const float amax = std::exp2(exponent(rng));
    const float s = kg::groupwise_scale(amax);
    ASSERT_EQ(s, ref::groupwise_scale(amax)) << amax;
    int e = 0;
    ASSERT_EQ(std::frexp(s, &e), 0.5f) << amax;  // a power of two
    const float v = std::max(amax, 1e-4f) / 448.0f;
    ASSERT_GE(s, v) << amax;
    ASSERT_LT(s / 2.0f, v) << amax;
  }
}

TEST(GroupwiseFp8, BlockMaximumLandsAtOrJustBelow448AndRoundTripsWithinHalfAStep) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int block = 0; block < 2000; ++block) {
    std::vector<float> x(128);
    float amax = 0.0f;
    for (float& v : x) {
      v = normal(rng);
      amax = std::max(amax, std::fabs(v));
    }
    const float s = kg::groupwise_scale(amax);
    float largest = 0.0f;
    for (const float v : x) {
      const uint8_t q = kg::groupwise_quantize(v, s);
      ASSERT_EQ(q, quant_reference::e4m3_code(v / (s + 1e-8f)));
      const float back = quant_reference::e4m3_value(q) * s;
      largest = std::max(largest, std::fabs(quant_reference::e4m3_value(q)));
      // Half an e4m3 step of |v| / s (3 mantissa bits; the subnormal step 2^-9 below 2^-6), plus the
      // epsilon's relative 1e-8 / s.
      const float scaled = std::fabs(v) / s;
      const float step = scaled < 0x1p-6f ? 0x1p-9f : std::ldexp(1.0f, std::ilogb(scaled) - 3);
      ASSERT_LE(std::fabs(back - v), (0.5f * step + scaled * 1e-8f / s + 1e-6f) * s) << v << " " << s;
    }
    EXPECT_GE(largest, 224.0f);  // the scale is the smallest power of two: the maximum uses the top binade
    EXPECT_LE(largest, 448.0f);
  }
}

TEST(GroupwiseFp8, LayoutsPlaceEveryBlockOnce) {
  constexpr int64_t rows = 7, n_blocks = 3, k_blocks = 5;
  for (const kg::ScaleMajor major : {kg::ScaleMajor::mn, kg::ScaleMajor::k}) {
    std::set<int64_t> a, b;
    for (int64_t kb = 0; kb < k_blocks; ++kb) {
      for (int64_t r = 0; r < rows; ++r) a.insert(kg::a_scale_offset(major, rows, k_blocks, r, kb));
      for (int64_t nb = 0; nb < n_blocks; ++nb) b.insert(kg::b_scale_offset(major, n_blocks, k_blocks, nb, kb));
    }
    EXPECT_EQ(a.size(), static_cast<std::size_t>(rows * k_blocks));
    EXPECT_EQ(*a.rbegin(), rows * k_blocks - 1);
    EXPECT_EQ(b.size(), static_cast<std::size_t>(n_blocks * k_blocks));
    EXPECT_EQ(*b.rbegin(), n_blocks * k_blocks - 1);
  }
  // The fact sheet's shapes: MN-major a_scale (k/t, m), K-major (m, k/t).
  EXPECT_EQ(kg::a_scale_offset(kg::ScaleMajor::mn, rows, k_blocks, 2, 3), 3 * rows + 2);
  EXPECT_EQ(kg::a_scale_offset(kg::ScaleMajor::k, rows, k_blocks, 2, 3), 2 * k_blocks + 3);
  EXPECT_EQ(kg::b_scale_offset(kg::ScaleMajor::mn, n_blocks, k_blocks, 1, 4), 4 * n_blocks + 1);
  EXPECT_EQ(kg::b_scale_offset(kg::ScaleMajor::k, n_blocks, k_blocks, 1, 4), 1 * k_blocks + 4);
}

// kbench's extension: n 2112 (DeepSeek-V3's decode GEMM) has 16 whole 128-row blocks and a last one
// of 64 rows, 17 in all; every (n-block, k-block) of k 7168 gets its own scale in both layouts.
TEST(GroupwiseFp8, BScalesOfNotAMultipleOf128HaveAPartialLastBlock) {
  EXPECT_EQ(kg::scale_blocks(2112, 128), 17);
  EXPECT_EQ(kg::scale_blocks(2048, 128), 16);
  EXPECT_EQ(kg::scale_blocks(1, 128), 1);
  const int64_t n_blocks = kg::scale_blocks(2112, 128), k_blocks = 7168 / 128;
  for (const kg::ScaleMajor major : {kg::ScaleMajor::mn, kg::ScaleMajor::k}) {
    std::set<int64_t> b;
    for (int64_t kb = 0; kb < k_blocks; ++kb) {
      for (int64_t nb = 0; nb < n_blocks; ++nb) b.insert(kg::b_scale_offset(major, n_blocks, k_blocks, nb, kb));
    }
    EXPECT_EQ(b.size(), static_cast<std::size_t>(17 * 56));
    EXPECT_EQ(*b.rbegin(), 17 * 56 - 1);
  }
  // Row 2111 (the last) is in block 16: MN-major [k-block][17], K-major [17][k-block].
  EXPECT_EQ(kg::b_scale_offset(kg::ScaleMajor::mn, n_blocks, k_blocks, 2111 / 128, 3), 3 * 17 + 16);
  EXPECT_EQ(kg::b_scale_offset(kg::ScaleMajor::k, n_blocks, k_blocks, 2111 / 128, 3), 16 * 56 + 3);
}

// The host quantizer's partial last block: its scale from the amax of the rows it has alone.
TEST(GroupwiseFp8, PartialLastBlockScalesByItsOwnRows) {
  constexpr int64_t n = 200, k = 256, tile = 128;  // blocks of 128 and 72 rows
  std::vector<float> b(n * k, 1.0f);
  b[5 * k + 3] = 448.0f;          // block (0, 0)
  b[150 * k + 130] = 4.0f * 448;  // block (1, 1), a row of the partial block
  for (const kg::ScaleMajor major : {kg::ScaleMajor::mn, kg::ScaleMajor::k}) {
    const ref::GroupwiseOperand q = ref::quantize_b(b, n, k, tile, major);
    ASSERT_EQ(q.scales.size(), 4u);
    ASSERT_EQ(q.bytes.size(), static_cast<std::size_t>(n * k));
    const auto scale = [&](int64_t n_block, int64_t k_block) {
      return q.scales[static_cast<std::size_t>(kg::b_scale_offset(major, 2, 2, n_block, k_block))];
    };
    EXPECT_EQ(scale(0, 0), 1.0f);
    EXPECT_EQ(scale(0, 1), 1.0f / 256);  // amax 1: the power of two at or above 1 / 448
    EXPECT_EQ(scale(1, 0), 1.0f / 256);
    EXPECT_EQ(scale(1, 1), 4.0f);
    // The partial block's last element, quantized with its block's scale.
    EXPECT_EQ(quant_reference::e4m3_value(q.bytes[static_cast<std::size_t>(n * k - 1)]) * scale(1, 1), 1.0f);
  }
}

// The reference GEMM on operands whose blocks have very different scales, in both layouts: each
// product must use its own blocks' scales (a scale read from the wrong block is off by powers of two).
void expect_reference_gemm_uses_each_blocks_scale(int64_t n) {
  constexpr int64_t m = 7, k = 384, tile = 128;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a(m * k), b(n * k);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t c = 0; c < k; ++c) a[i * k + c] = normal(rng) * std::ldexp(1.0f, static_cast<int>(i + 3 * (c / tile)) - 6);
  }
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t c = 0; c < k; ++c) b[j * k + c] = normal(rng) * std::ldexp(1.0f, static_cast<int>(2 * (j / tile) - c / tile));
  }
  for (const kg::ScaleMajor major : {kg::ScaleMajor::mn, kg::ScaleMajor::k}) {
    const ref::GroupwiseOperand qa = ref::quantize_a(a, m, k, tile, major);
    const ref::GroupwiseOperand qb = ref::quantize_b(b, n, k, tile, major);
    const std::vector<float> d = ref::groupwise_gemm(qa, qb, m, n, k, tile, major);
    double worst = 0.0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double exact = 0.0;
        double magnitude = 0.0;
        for (int64_t c = 0; c < k; ++c) {
          exact += static_cast<double>(a[i * k + c]) * b[j * k + c];
          magnitude += std::fabs(static_cast<double>(a[i * k + c]) * b[j * k + c]);
        }
        worst = std::max(worst, std::fabs(d[i * n + j] - exact) / magnitude);
      }
    }
    // e4m3 keeps 3 mantissa bits: each operand within 2^-4 relative, a product within ~2^-3 of the
    // sum of magnitudes; a misplaced scale would be off by a factor of 2 or more.
    EXPECT_LT(worst, 0.13) << (major == kg::ScaleMajor::mn ? "MN" : "K") << " n " << n;
  }
}

TEST(GroupwiseFp8, ReferenceGemmUsesEachBlocksScaleInBothLayouts) {
  expect_reference_gemm_uses_each_blocks_scale(256);
  expect_reference_gemm_uses_each_blocks_scale(200);  // B's last block holds 72 rows
}

}  // namespace
}  // namespace kbench
