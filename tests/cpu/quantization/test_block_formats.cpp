// The block formats' rules (kernels/quantization/block_formats.hpp, the code the kernels run)
// against NVIDIA's host models of the conversion instructions (cuda_fp4.h / cuda_fp8.h, which
// the device cannot use on Hopper), against kbench's plain host reference, and at every boundary.
#include <cuda_fp4.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "kernels/quantization/block_formats.hpp"
#include "routines/quantization/quant_reference.hpp"

namespace kbench {
namespace {

namespace q = kernels::quant;
namespace ref = quant_reference;

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Every bfloat16 value (as a float), the values one float ulp either side of it, and each of those
// times a few factors: covers every binade, the subnormals and every rounding boundary of the
// 8-bit and 4-bit formats (their boundaries are bfloat16 values).
std::vector<float> probe_values() {
  std::vector<float> v;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint32_t bits = b << 16;
    v.push_back(from_bits(bits));
    v.push_back(from_bits(bits + 1));
    if ((bits & 0x7FFFFFFF) != 0) v.push_back(from_bits(bits - 1));
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (int i = 0; i < 200000; ++i) v.push_back(normal(rng));
  return v;
}

TEST(BlockFormats, E2m1MatchesTheHardwareModelAndTheReference) {
  for (float x : probe_values()) {
    const auto hw = static_cast<uint8_t>(__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest));
    ASSERT_EQ(q::float_to_e2m1(x), hw) << x;
    ASSERT_EQ(ref::e2m1_code(x), hw) << x;
  }
}

TEST(BlockFormats, E4m3MatchesTheHardwareModelAndTheReference) {
  for (float x : probe_values()) {
    const auto hw = static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
    ASSERT_EQ(q::float_to_e4m3(x), hw) << x;
    ASSERT_EQ(ref::e4m3_code(x), hw) << x;
  }
}

TEST(BlockFormats, Ue8m0RoundUpMatchesTheHardwareModelAndTheReference) {
  for (float x : probe_values()) {
    const float v = std::fabs(x);
    const auto hw = static_cast<uint8_t>(__nv_cvt_float_to_e8m0(v, __NV_SATFINITE, cudaRoundPosInf));
    ASSERT_EQ(q::float_to_ue8m0_round_up(v), hw) << v;
    ASSERT_EQ(ref::ue8m0_code_round_up(v), hw) << v;
  }
}

TEST(BlockFormats, E2m1Boundaries) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // Ties to the even code: 0.25 -> 0, 0.75 -> 1.0, 1.25 -> 1.0, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4.
  const std::pair<float, uint8_t> cases[] = {
      {0.0f, 0x0}, {-0.0f, 0x8}, {0.25f, 0x0}, {0.2500001f, 0x1}, {0.5f, 0x1}, {0.75f, 0x2}, {0.7499999f, 0x1},
      {1.0f, 0x2}, {1.25f, 0x2}, {1.2500001f, 0x3}, {1.5f, 0x3}, {1.75f, 0x4}, {2.0f, 0x4}, {2.5f, 0x4},
      {2.5000002f, 0x5}, {3.0f, 0x5}, {3.5f, 0x6}, {4.0f, 0x6}, {5.0f, 0x6}, {5.0000005f, 0x7}, {6.0f, 0x7},
      {1e30f, 0x7}, {inf, 0x7}, {-inf, 0xF}, {-6.0f, 0xF}, {-0.1f, 0x8}, {-2.5f, 0xC}, {1e-40f, 0x0},
      {nan, 0x7}, {-nan, 0x7}};
  for (const auto& [x, code] : cases) EXPECT_EQ(q::float_to_e2m1(x), code) << x;
  for (uint8_t c = 0; c < 16; ++c) {
    EXPECT_EQ(q::e2m1_to_float(c), ref::e2m1_value(c));
    EXPECT_EQ(q::float_to_e2m1(q::e2m1_to_float(c)), c);
  }
}

TEST(BlockFormats, E4m3Boundaries) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float sub = std::ldexp(1.0f, -9);  // the smallest subnormal
  const std::pair<float, uint8_t> cases[] = {
      {0.0f, 0x00}, {-0.0f, 0x80}, {sub, 0x01}, {sub / 2, 0x00} /* tie -> even 0 */, {sub * 1.5f, 0x02} /* tie -> 2 */,
      {sub * 2.5f, 0x02}, {sub * 7.5f, 0x08} /* subnormal rounds up to the smallest normal */,
      {std::ldexp(1.0f, -6), 0x08}, {1.0f, 0x38}, {1.0625f, 0x38} /* tie -> even */, {1.1875f, 0x3A},
      {448.0f, 0x7E}, {464.0f, 0x7E}, {480.0f, 0x7E}, {1e9f, 0x7E}, {inf, 0x7E}, {-inf, 0xFE}, {-448.0f, 0xFE},
      {nan, 0x7F}, {-nan, 0x7F}, {1e-30f, 0x00}, {-1e-30f, 0x80}};
  for (const auto& [x, code] : cases) EXPECT_EQ(q::float_to_e4m3(x), code) << x;
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<uint8_t>(c);
    const float mine = q::e4m3_to_float(code);
    const float theirs = ref::e4m3_value(code);
    if (std::isnan(theirs)) {
      EXPECT_TRUE(std::isnan(mine)) << c;
    } else {
      EXPECT_EQ(mine, theirs) << c;
      EXPECT_EQ(q::float_to_e4m3(mine), code) << c;
    }
  }
}

TEST(BlockFormats, Ue8m0Boundaries) {
  const float inf = std::numeric_limits<float>::infinity();
  const float two_m127 = std::ldexp(1.0f, -127);
  const std::pair<float, uint8_t> cases[] = {
      {0.0f, 0}, {1e-45f, 0}, {two_m127, 0}, {std::nextafter(two_m127, 1.0f), 1}, {std::ldexp(1.0f, -126), 1},
      {1.0f, 127}, {std::nextafter(1.0f, 2.0f), 128}, {std::nextafter(1.0f, 0.0f), 127}, {2.0f, 128},
      {std::ldexp(1.0f, 127), 254}, {std::nextafter(std::ldexp(1.0f, 127), inf), 254}, {inf, 254},
      {std::numeric_limits<float>::quiet_NaN(), 255}};
  for (const auto& [v, code] : cases) EXPECT_EQ(q::float_to_ue8m0_round_up(v), code) << v;
  for (int c = 0; c < 255; ++c) {
    const auto code = static_cast<uint8_t>(c);
    EXPECT_EQ(q::ue8m0_to_float(code), ref::ue8m0_value(code)) << c;
    EXPECT_EQ(q::ue8m0_reciprocal(code) * q::ue8m0_to_float(code), 1.0f) << c;
  }
}

TEST(BlockFormats, AllZeroBlocksGiveZeroScaleAndZeroCodes) {
  for (q::BlockFormat f : {q::BlockFormat::nvfp4, q::BlockFormat::mxfp4, q::BlockFormat::mxfp8}) {
    const q::BlockScale s = q::block_scale(f, 0.0f, 1.0f);
    EXPECT_EQ(s.sf, 0);
    EXPECT_EQ(s.factor, 0.0f);
    EXPECT_EQ(q::quantize_element(f, 0.0f, s.factor), 0);
  }
  // NVFP4 blocks whose scale underflows e4m3 are zero blocks too.
  const q::BlockScale tiny = q::block_scale(q::BlockFormat::nvfp4, 1e-6f, 1.0f);
  EXPECT_EQ(tiny.sf, 0);
  EXPECT_EQ(q::quantize_element(q::BlockFormat::nvfp4, 1e-6f, tiny.factor), 0);
}

TEST(BlockFormats, BlockScalesFollowTheRules) {
  // MXFP4: amax 6 -> scale 2^0 (code 127); amax 6.01 -> 2^1; MXFP8: amax 448 -> 2^0, 449 -> 2^1.
  EXPECT_EQ(q::block_scale(q::BlockFormat::mxfp4, 6.0f, 1.0f).sf, 127);
  EXPECT_EQ(q::block_scale(q::BlockFormat::mxfp4, 6.01f, 1.0f).sf, 128);
  EXPECT_EQ(q::block_scale(q::BlockFormat::mxfp8, 448.0f, 1.0f).sf, 127);
  EXPECT_EQ(q::block_scale(q::BlockFormat::mxfp8, 449.0f, 1.0f).sf, 128);
  EXPECT_EQ(q::block_scale(q::BlockFormat::mxfp8, 448.0f, 1.0f).factor, 1.0f);
  // NVFP4: g * amax / 6 = 1 -> scale 1.0 (0x38), factor g; saturates at 448.
  const q::BlockScale s = q::block_scale(q::BlockFormat::nvfp4, 3.0f, 2.0f);
  EXPECT_EQ(s.sf, 0x38);
  EXPECT_EQ(s.factor, 2.0f);
  EXPECT_EQ(q::block_scale(q::BlockFormat::nvfp4, 1e6f, 1.0f).sf, 0x7E);
  // The element with the largest magnitude lands on +-6 (the top of e2m1) when the scale is exact.
  EXPECT_EQ(q::quantize_element(q::BlockFormat::nvfp4, -3.0f, s.factor), 0xF);
}

TEST(BlockFormats, LayoutOffsetsMatchTheReferenceAndAreABijection) {
  for (q::SfLayout layout : {q::SfLayout::linear, q::SfLayout::swizzled_128x4, q::SfLayout::swizzled_8x4}) {
    for (int64_t rows : {1, 7, 8, 33, 128, 200, 257}) {
      for (int64_t columns : {1, 3, 4, 7, 64, 65}) {
        const int64_t padded_rows = q::sf_padded_rows(layout, rows);
        const int64_t padded_columns = q::sf_padded_columns(layout, columns);
        ASSERT_EQ(q::sf_bytes(layout, rows, columns), padded_rows * padded_columns);
        std::set<int64_t> seen;
        for (int64_t m = 0; m < padded_rows; ++m) {
          for (int64_t k = 0; k < padded_columns; ++k) {
            const int64_t offset = q::sf_offset(layout, m, k, columns);
            ASSERT_EQ(offset, ref::scale_offset(layout, m, k, columns)) << m << " " << k;
            ASSERT_GE(offset, 0);
            ASSERT_LT(offset, q::sf_bytes(layout, rows, columns));
            ASSERT_TRUE(seen.insert(offset).second) << "offset used twice: " << m << " " << k;
          }
        }
      }
    }
  }
  // The fact sheet's formulas at a few points.
  EXPECT_EQ(q::sf_offset(q::SfLayout::swizzled_128x4, 33, 5, 8), 512 + 16 + 4 + 1);
  EXPECT_EQ(q::sf_offset(q::SfLayout::swizzled_128x4, 130, 2, 8), 2 * 512 + 2 * 16 + 2);
  EXPECT_EQ(q::sf_offset(q::SfLayout::swizzled_8x4, 9, 6, 8), 2 * 32 + 32 + 4 + 2);
  EXPECT_EQ(q::sf_offset(q::SfLayout::linear, 3, 2, 5), 17);
}

TEST(BlockFormats, ShuffledRowsPermuteEachBlockOf32) {
  EXPECT_EQ(q::shuffled_row(0), 0);
  EXPECT_EQ(q::shuffled_row(1), 8);
  EXPECT_EQ(q::shuffled_row(4), 1);
  EXPECT_EQ(q::shuffled_row(31), 31);
  EXPECT_EQ(q::shuffled_row(32 + 2), 32 + 16);
  std::set<int64_t> rows;
  for (int64_t r = 0; r < 64; ++r) rows.insert(q::shuffled_row(r));
  EXPECT_EQ(rows.size(), 64u);
  EXPECT_EQ(*rows.rbegin(), 63);
}

// ---- Whole matrices: the kernels' rules, run on the host, against the reference -------------

struct Shape {
  q::BlockFormat format;
  int block;
  q::SfLayout layout;
  int64_t batches, rows, columns, padded_columns;
  bool shuffle = false;
  bool per_token = false;
  float global_scale = 1.0f;
};

kernels::QuantizeParams params_of(const Shape& s) {
  kernels::QuantizeParams p;
  p.format = s.format;
  p.block_size = s.block;
  p.layout = s.layout;
  p.batches = s.batches;
  p.rows = s.rows;
  p.columns = s.columns;
  p.padded_columns = s.padded_columns;
  p.shuffle_rows = s.shuffle;
  p.global_scale = s.global_scale;
  static float token_marker;
  p.token_scales = s.per_token ? &token_marker : nullptr;
  return p;
}

// What the kernel computes, element for element, with the shared rules (its thread loop, serial).
ref::Quantized run_kernel_rules(const std::vector<float>& x, const kernels::QuantizeParams& p) {
  ref::Quantized out;
  out.data.assign(static_cast<std::size_t>(p.batches * p.rows * p.output_row_bytes()), 0xEE);
  out.scales.assign(static_cast<std::size_t>(p.batches * p.scale_bytes_per_batch()), 0xEE);
  const int64_t scale_columns = p.scale_columns();
  if (p.token_scales) {
    out.token_scales.resize(static_cast<std::size_t>(p.rows));
    for (int64_t r = 0; r < p.rows; ++r) {
      float amax = 0.0f;
      for (int64_t c = 0; c < p.columns; ++c) amax = std::fmax(amax, std::fabs(x[static_cast<std::size_t>(r * p.columns + c)]));
      out.token_scales[static_cast<std::size_t>(r)] = q::per_token_scale(amax);
    }
  }
  for (int64_t b = 0; b < p.batches; ++b) {
    for (int64_t row = 0; row < q::sf_padded_rows(p.layout, p.rows); ++row) {
      for (int64_t k = 0; k < q::sf_padded_columns(p.layout, scale_columns); ++k) {
        uint8_t* scales = out.scales.data() + b * p.scale_bytes_per_batch();
        const int64_t out_row = p.shuffle_rows ? q::shuffled_row(row) : row;
        if (row >= p.rows || k >= scale_columns) {
          scales[q::sf_offset(p.layout, row, k, scale_columns)] = 0;
          continue;
        }
        std::vector<float> block(static_cast<std::size_t>(p.block_size), 0.0f);
        for (int i = 0; i < p.block_size; ++i) {
          const int64_t c = k * p.block_size + i;
          if (c < p.columns) block[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>((b * p.rows + row) * p.columns + c)];
        }
        float amax = 0.0f;
        for (float v : block) amax = std::fmax(amax, std::fabs(v));
        const float g = p.token_scales ? q::per_token_global_scale(out.token_scales[static_cast<std::size_t>(row)]) : p.global_scale;
        const q::BlockScale s = q::block_scale(p.format, amax, g);
        uint8_t* dst = out.data.data() + (b * p.rows + out_row) * p.output_row_bytes();
        for (int i = 0; i < p.block_size; ++i) {
          const uint8_t code = q::quantize_element(p.format, block[static_cast<std::size_t>(i)], s.factor);
          const int64_t c = k * p.block_size + i;
          if (p.format == q::BlockFormat::mxfp8) {
            dst[c] = code;
          } else if (c % 2 == 0) {
            dst[c / 2] = code;
          } else {
            dst[c / 2] = static_cast<uint8_t>(dst[c / 2] | (code << 4));
          }
        }
        scales[q::sf_offset(p.layout, out_row, k, scale_columns)] = s.sf;
      }
    }
  }
  return out;
}

std::vector<float> random_input(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(s.batches * s.rows * s.columns));
  for (float& v : x) v = normal(rng);
  // A zero block, a block of one huge value and a row of tiny values: the edge cases in place.
  for (int i = 0; i < s.block; ++i) x[static_cast<std::size_t>(i)] = 0.0f;
  if (s.columns >= 2 * s.block) x[static_cast<std::size_t>(s.block)] = 3e4f;
  if (s.rows > 1) {
    for (int64_t c = 0; c < s.columns; ++c) x[static_cast<std::size_t>(s.columns + c)] *= 1e-30f;
  }
  return x;
}

// |x - dequantized| within the format's bound, per element (input row order).
void expect_round_trip_within_bound(const std::vector<float>& x, const ref::Quantized& got, const kernels::QuantizeParams& p) {
  const int64_t scale_columns = p.scale_columns();
  for (int64_t b = 0; b < p.batches; ++b) {
    for (int64_t row = 0; row < p.rows; ++row) {
      const int64_t out_row = p.shuffle_rows ? q::shuffled_row(row) : row;
      for (int64_t c = 0; c < p.columns; ++c) {
        const float v = x[static_cast<std::size_t>((b * p.rows + row) * p.columns + c)];
        const float d = ref::dequantize(got, p, b, row, c);
        const uint8_t sf = got.scales[static_cast<std::size_t>(
            b * p.scale_bytes_per_batch() + q::sf_offset(p.layout, out_row, c / p.block_size, scale_columns))];
        double bound = 0;
        switch (p.format) {
          case q::BlockFormat::nvfp4: {
            const float g = got.token_scales.empty() ? p.global_scale : 1.0f / got.token_scales[static_cast<std::size_t>(row)];
            // One e2m1 step at most (the gap 4..6 is 2) in scaled units, plus a zero scale's loss;
            // beyond the two-level range (|x| g > 448 x 6) the value saturates.
            if (std::fabs(v) * g > 448.0f * 6.0f) continue;
            bound = sf == 0 ? std::fabs(v) : ref::e4m3_value(sf) / g;
            break;
          }
          case q::BlockFormat::mxfp4: bound = ref::ue8m0_value(sf); break;
          case q::BlockFormat::mxfp8: bound = std::fabs(v) / 16.0 + ref::ue8m0_value(sf) / 1024.0; break;
        }
        ASSERT_LE(std::fabs(static_cast<double>(v) - d), bound * 1.0000001 + 1e-37)
            << "batch " << b << " row " << row << " column " << c << ": " << v << " -> " << d;
      }
    }
  }
}

TEST(BlockQuantization, KernelRulesEqualTheReferenceByteForByte) {
  const Shape shapes[] = {
      {q::BlockFormat::nvfp4, 16, q::SfLayout::swizzled_128x4, 1, 130, 96, 96},
      {q::BlockFormat::nvfp4, 16, q::SfLayout::swizzled_8x4, 1, 13, 48, 48},
      {q::BlockFormat::nvfp4, 16, q::SfLayout::linear, 1, 5, 160, 160, false, false, 37.5f},
      {q::BlockFormat::nvfp4, 32, q::SfLayout::swizzled_128x4, 1, 64, 128, 128},
      {q::BlockFormat::nvfp4, 16, q::SfLayout::swizzled_128x4, 1, 256, 64, 64, true},
      {q::BlockFormat::nvfp4, 16, q::SfLayout::linear, 1, 9, 80, 80, false, true},
      {q::BlockFormat::nvfp4, 16, q::SfLayout::swizzled_128x4, 3, 40, 64, 64},
      {q::BlockFormat::mxfp4, 32, q::SfLayout::swizzled_128x4, 1, 150, 96, 96},
      {q::BlockFormat::mxfp4, 32, q::SfLayout::linear, 1, 7, 64, 64},
      {q::BlockFormat::mxfp8, 32, q::SfLayout::swizzled_128x4, 1, 131, 96, 128},
      {q::BlockFormat::mxfp8, 32, q::SfLayout::linear, 1, 6, 64, 64},
  };
  uint32_t seed = 1;
  for (const Shape& s : shapes) {
    SCOPED_TRACE("format " + std::to_string(static_cast<int>(s.format)) + " rows " + std::to_string(s.rows) +
                 " columns " + std::to_string(s.columns));
    const kernels::QuantizeParams p = params_of(s);
    const std::vector<float> x = random_input(s, seed++);
    const ref::Quantized expected = ref::quantize(x, p);
    const ref::Quantized got = run_kernel_rules(x, p);
    ASSERT_EQ(got.data, expected.data);
    ASSERT_EQ(got.scales, expected.scales);
    ASSERT_EQ(got.token_scales, expected.token_scales);
    expect_round_trip_within_bound(x, expected, p);
  }
}

TEST(BlockQuantization, PaddingIsZero) {
  // MXFP8 with columns 96 padded to 128: the last 32 output bytes of a row and their scale are 0;
  // 128x4 padding rows (131 -> 256) and scale columns (4 -> 4) are 0.
  const Shape s{q::BlockFormat::mxfp8, 32, q::SfLayout::swizzled_128x4, 1, 131, 96, 128};
  const kernels::QuantizeParams p = params_of(s);
  const ref::Quantized got = ref::quantize(random_input(s, 99), p);
  for (int64_t row = 0; row < s.rows; ++row) {
    for (int64_t c = 96; c < 128; ++c) ASSERT_EQ(got.data[static_cast<std::size_t>(row * 128 + c)], 0);
    ASSERT_EQ(got.scales[static_cast<std::size_t>(q::sf_offset(p.layout, row, 3, 4))], 0);
  }
  for (int64_t row = s.rows; row < 256; ++row) {
    for (int64_t k = 0; k < 4; ++k) ASSERT_EQ(got.scales[static_cast<std::size_t>(q::sf_offset(p.layout, row, k, 4))], 0);
  }
}

}  // namespace
}  // namespace kbench
