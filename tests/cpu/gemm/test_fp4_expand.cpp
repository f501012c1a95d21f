// The FP4 operand modes of kbench's wgmma GEMM without a GPU (kernels/gemm/sm90/fp4_expand.hpp):
// every code in every nibble position expands to its bf16 bits (e2m1 x 2^-126) and its fp16 bits
// (e2m1 x 2^-14) in the documented pair order, whatever its neighbours; block_fp4's chunk order is a
// permutation with slot c in block c, and weight_fp4's pairs regroup into k order; the scale factors
// times every code give e2m1 x scale x 2^-32 exactly as a bf16 normal over the documented ranges
// (every e4m3 scale, ue8m0 codes 34..160), and e2m1 x scale x 2^-14 exactly in fp16 for every e4m3
// scale; and the slice's scale word and byte are the block's scale in every layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "kernels/gemm/sm90/fp4_expand.hpp"

namespace {

using kbench::DType;
namespace quant = kbench::kernels::quant;
namespace wg = kbench::kernels::gemm::sm90;

float bf16_value(uint32_t bits16) { return quant::bits_float(bits16 << 16); }

// IEEE half's value (finite codes).
float fp16_value(uint32_t bits16) {
  const uint32_t exponent = (bits16 >> 10) & 0x1Fu, mantissa = bits16 & 0x3FFu;
  const float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                                        : std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  return (bits16 & 0x8000u) != 0 ? -magnitude : magnitude;
}

// Whether fp16 holds x exactly: at most 65504, and a multiple of its binade's step (2^-24 below
// 2^-14, the subnormals).
bool fp16_holds(float x) {
  const float magnitude = std::fabs(x);
  if (magnitude == 0.0f) return true;
  if (magnitude > 65504.0f) return false;
  const float step = std::ldexp(1.0f, std::max(std::ilogb(magnitude), -14) - 10);
  return std::fmod(magnitude, step) == 0.0f;
}

TEST(Fp4Expand, EveryCodeInEveryPositionWhateverItsNeighbours) {
  std::mt19937 random(7);
  for (int s = 0; s < 4; ++s) {
    for (uint32_t lo = 0; lo < 16; ++lo) {
      for (uint32_t hi = 0; hi < 16; ++hi) {
        for (int trial = 0; trial < 8; ++trial) {
          // Element s (bits 4s..) and element s + 4 (bits 16 + 4s..) in a word of random neighbours.
          uint32_t q = static_cast<uint32_t>(random());
          q = (q & ~(0xFu << (4 * s)) & ~(0xFu << (4 * s + 16))) | lo << (4 * s) | hi << (4 * s + 16);
          const uint32_t pair = wg::fp4_pair_bits<DType::bfloat16>(q, s);
          EXPECT_EQ(bf16_value(pair & 0xFFFF), quant::e2m1_to_float(static_cast<uint8_t>(lo)) * 0x1p-126f) << s << " " << lo;
          EXPECT_EQ(bf16_value(pair >> 16), quant::e2m1_to_float(static_cast<uint8_t>(hi)) * 0x1p-126f) << s << " " << hi;
          EXPECT_EQ(std::signbit(bf16_value(pair & 0xFFFF)), (lo & 8) != 0);
          EXPECT_EQ(std::signbit(bf16_value(pair >> 16)), (hi & 8) != 0);
          const uint32_t half_pair = wg::fp4_pair_bits<DType::float16>(q, s);
          EXPECT_EQ(fp16_value(half_pair & 0xFFFF), quant::e2m1_to_float(static_cast<uint8_t>(lo)) * 0x1p-14f) << s << " " << lo;
          EXPECT_EQ(fp16_value(half_pair >> 16), quant::e2m1_to_float(static_cast<uint8_t>(hi)) * 0x1p-14f) << s << " " << hi;
          EXPECT_EQ((half_pair & 0x8000u) != 0, (lo & 8) != 0);
          EXPECT_EQ((half_pair >> 31) != 0, (hi & 8) != 0);
        }
      }
    }
  }
}

// block_fp4's k order over a slice row (chunk j, slot c, half e) is a permutation of its 64
// elements, slot c always of block c (a consumer thread's A fragment needs one scale), and each
// pair's bits are its elements' codes.
TEST(Fp4Expand, ChunkOrderIsAPermutationWithSlotCInBlockC) {
  std::mt19937 random(13);
  uint32_t words[8];
  for (uint32_t& w : words) w = static_cast<uint32_t>(random());
  bool seen[wg::kFp4SliceElements] = {};
  for (int j = 0; j < 8; ++j) {
    for (int c = 0; c < 4; ++c) {
      const int word = wg::fp4_chunk_word(j, c);
      const uint32_t pair = wg::fp4_pair_bits<DType::bfloat16>(words[word], j % 4);
      for (int e = 0; e < 2; ++e) {
        const int element = 8 * word + j % 4 + 4 * e;
        ASSERT_FALSE(seen[element]) << j << " " << c << " " << e;
        seen[element] = true;
        EXPECT_EQ(element / 16, c);
        const auto code = static_cast<uint8_t>((words[element / 8] >> (4 * (element % 8))) & 0xFu);
        EXPECT_EQ(bf16_value(e == 0 ? pair & 0xFFFF : pair >> 16), quant::e2m1_to_float(code) * 0x1p-126f) << element;
      }
    }
  }
}

// weight_fp4's order: the pairs (s, s + 4) of a word regrouped so that element i is half i % 2 of
// output word i / 2, whatever the codes.
TEST(Fp4Expand, PairsRegroupIntoKOrder) {
  std::mt19937 random(11);
  for (int trial = 0; trial < 1000; ++trial) {
    const uint32_t q = static_cast<uint32_t>(random());
    for (const bool fp16 : {false, true}) {
      uint32_t pairs[4], in_order[4];
      for (int s = 0; s < 4; ++s) {
        pairs[s] = fp16 ? wg::fp4_pair_bits<DType::float16>(q, s) : wg::fp4_pair_bits<DType::bfloat16>(q, s);
      }
      wg::fp4_pairs_in_order(pairs, in_order);
      for (int i = 0; i < 8; ++i) {
        const auto code = static_cast<uint8_t>((q >> (4 * i)) & 0xFu);
        const uint32_t bits = (in_order[i / 2] >> (16 * (i % 2))) & 0xFFFFu;
        const float value = fp16 ? fp16_value(bits) * 0x1p14f : bf16_value(bits) * 0x1p126f;
        EXPECT_EQ(value, quant::e2m1_to_float(code)) << std::hex << q << " element " << i;
        EXPECT_EQ((bits & 0x8000u) != 0, (code & 8) != 0) << std::hex << q << " element " << i;
      }
    }
  }
}

// e2m1 (bits) x scale factor, both bf16: the float product is exact (8 x 8 significant bits), so it
// is what mul.rn.bf16x2 gives wherever it is a bf16.
template <quant::BlockFormat kFormat>
void expect_exact_products(uint8_t sf, float scale) {
  const float factor = bf16_value(wg::fp4_scale_bits<DType::bfloat16, kFormat>(sf));
  for (uint8_t code = 0; code < 16; ++code) {
    const float product = bf16_value(((code & 7u) << 6) | ((code & 8u) << 12)) * factor;
    const float expected = quant::e2m1_to_float(code) * scale * 0x1p-32f;
    EXPECT_EQ(product, expected) << static_cast<int>(sf) << " " << static_cast<int>(code);
    EXPECT_EQ(quant::float_bits(product) & 0xFFFFu, 0u) << "not a bf16: " << static_cast<int>(sf);
    if (code % 8 != 0 && scale != 0.0f) {
      EXPECT_TRUE(std::isnormal(product)) << static_cast<int>(sf) << " " << static_cast<int>(code);
    }
  }
}

TEST(Fp4Expand, Nvfp4ScalesAreExactForEveryFiniteE4m3) {
  for (int sf = 0; sf < 256; ++sf) {
    if ((sf & 0x7F) == 0x7F) continue;  // NaN
    const float scale = quant::e4m3_to_float(static_cast<uint8_t>(sf));
    expect_exact_products<quant::BlockFormat::nvfp4>(static_cast<uint8_t>(sf), scale);
  }
}

// fp16 (weight_fp4 with fp16 A): e2m1 x 2^-14 times the e4m3 scale itself, both fp16: the float
// product is exact (11 x 11 significant bits), so it is what mul.rn.f16x2 gives wherever fp16 holds
// it, and it must: e2m1 x scale x 2^-14 for every code and every finite e4m3 scale, subnormals
// (down to 2^-24) included.
TEST(Fp4Expand, Nvfp4ScalesAreExactInFp16ForEveryFiniteE4m3) {
  for (int sf = 0; sf < 256; ++sf) {
    if ((sf & 0x7F) == 0x7F) continue;  // NaN
    const auto code_sf = static_cast<uint8_t>(sf);
    const float factor = fp16_value(wg::fp4_scale_bits<DType::float16, quant::BlockFormat::nvfp4>(code_sf));
    EXPECT_EQ(factor, quant::e4m3_to_float(code_sf)) << sf;
    for (uint8_t code = 0; code < 16; ++code) {
      const float product = fp16_value(((code & 7u) << 9) | ((code & 8u) << 12)) * factor;
      EXPECT_EQ(product, quant::e2m1_to_float(code) * quant::e4m3_to_float(code_sf) * 0x1p-14f) << sf << " " << int{code};
      EXPECT_TRUE(fp16_holds(product)) << "not an fp16: " << sf << " " << int{code};
    }
  }
  EXPECT_EQ(wg::fp4_operand_unscale<DType::float16>(), 0x1p14f);
  EXPECT_EQ(wg::fp4_operand_unscale<DType::bfloat16>(), 0x1p32f);
}

// The integer rule of MXFP4's bf16 factor is the float rule's bf16 (2^(code - 127) x 2^94) for every code.
TEST(Fp4Expand, Mxfp4FactorIsTheFloatRulesBf16) {
  for (int sf = 0; sf < 256; ++sf) {
    const auto code = static_cast<uint8_t>(sf);
    const uint32_t by_float_rule = quant::float_bits(quant::ue8m0_to_float(code) * 0x1p94f) >> 16;
    EXPECT_EQ((wg::fp4_scale_bits<DType::bfloat16, quant::BlockFormat::mxfp4>(code)), by_float_rule) << sf;
  }
}

TEST(Fp4Expand, Mxfp4ScalesAreExactFrom2ToTheMinus93To2ToThe33) {
  for (int sf = 34; sf <= 160; ++sf) {
    expect_exact_products<quant::BlockFormat::mxfp4>(static_cast<uint8_t>(sf), std::ldexp(1.0f, sf - 127));
  }
  EXPECT_TRUE(std::isinf(bf16_value(wg::fp4_scale_bits<DType::bfloat16, quant::BlockFormat::mxfp4>(161))));
  EXPECT_TRUE(std::isnan(bf16_value(wg::fp4_scale_bits<DType::bfloat16, quant::BlockFormat::mxfp4>(255))));
}

TEST(Fp4Expand, SliceScaleWordAndByteAreTheBlocksScale) {
  for (const auto layout : {quant::SfLayout::linear, quant::SfLayout::swizzled_128x4, quant::SfLayout::swizzled_8x4}) {
    for (const auto format : {quant::BlockFormat::nvfp4, quant::BlockFormat::mxfp4}) {
      const int64_t block = format == quant::BlockFormat::nvfp4 ? 16 : 32;
      const int64_t k = 1152, columns = k / block;
      for (int64_t row = 0; row < 300; ++row) {
        for (int64_t slice = 0; slice < k / wg::kFp4SliceElements; ++slice) {
          const int64_t word = wg::fp4_slice_scale_offset<int64_t>(layout, format, row, slice, columns);
          EXPECT_EQ(word % 4, 0);
          for (int c = 0; c < 4; ++c) {  // the slice's 16-element blocks
            const int64_t column = (slice * wg::kFp4SliceElements + 16 * c) / block;
            EXPECT_EQ(word + wg::fp4_slice_scale_byte(format, slice, c), quant::sf_offset(layout, row, column, columns))
                << static_cast<int>(layout) << " " << static_cast<int>(format) << " row " << row << " slice " << slice;
          }
          // The kernel's 32-bit offsets agree.
          EXPECT_EQ(static_cast<int64_t>(wg::fp4_slice_scale_offset<uint32_t>(layout, format, static_cast<uint32_t>(row),
                                                                             static_cast<uint32_t>(slice),
                                                                             static_cast<uint32_t>(columns))),
                    word);
        }
      }
    }
  }
}

}  // namespace
