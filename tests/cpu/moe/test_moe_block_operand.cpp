// The MoE's block-format operand values (kernels/moe/block_operand.hpp) on the host: NVFP4's global
// scale 448 * 6 / amax, each 16-block quantized by the quantizer's rules and written as e2m1 x scale
// byte (exact in bf16 and fp16), those values over the global scale being the decoder's values, and
// the intermediate's re-quantization under its dynamic global scale (gated_activation.hpp); MXFP8's
// values the decoder's, exact in bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/moe/gated_activation.hpp"
#include "kernels/moe/half_bits.hpp"
#include "kernels/moe/block_operand.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;
namespace quant = kernels::quant;

TEST(MoeNvfp4Operand, GlobalScaleIsTheConvention) {
  EXPECT_EQ(km::nvfp4_global_scale(6.0f), 448.0f);
  EXPECT_EQ(km::nvfp4_global_scale(2688.0f), 1.0f);
  EXPECT_EQ(km::nvfp4_global_scale(0.0f), 1.0f);  // an all-zero tensor
  EXPECT_EQ(km::nvfp4_alpha(4.0f, 0.5f), 0.5f);
}

TEST(MoeNvfp4Operand, ValuesAreTheDecodersTimesTheGlobalScaleExactly) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(16 * 64);
  for (float& v : x) v = normal(rng);
  x[40] = 0.0f;
  for (int i = 32; i < 48; ++i) x[static_cast<std::size_t>(i)] = 0.0f;  // a zero block
  float amax = 0.0f;
  for (const float v : x) amax = std::max(amax, std::abs(v));
  const float g = km::nvfp4_global_scale(amax);
  std::vector<float> values(x.size());
  km::block_operand_values(quant::BlockFormat::nvfp4, x.data(), static_cast<int64_t>(x.size()), g, values.data());
  for (std::size_t b = 0; b < x.size(); b += 16) {
    float block_amax = 0.0f;
    for (std::size_t i = 0; i < 16; ++i) block_amax = std::max(block_amax, std::abs(x[b + i]));
    const quant::BlockScale s = quant::block_scale(quant::BlockFormat::nvfp4, block_amax, g);
    for (std::size_t i = b; i < b + 16; ++i) {
      const uint8_t code = quant::quantize_element(quant::BlockFormat::nvfp4, x[i], s.factor);
      ASSERT_EQ(values[i], quant::e2m1_to_float(code) * quant::e4m3_to_float(s.sf)) << i;
      ASSERT_EQ(quant::ieee_div(values[i], g), quant::dequantize_element(quant::BlockFormat::nvfp4, code, s.sf, g)) << i;
      for (const bool fp16 : {false, true}) {  // exact as a 16-bit operand
        ASSERT_EQ(km::half_bits_to_float(km::float_to_half_bits(values[i], fp16), fp16), values[i]) << i;
      }
    }
  }
  for (int i = 32; i < 48; ++i) EXPECT_EQ(values[static_cast<std::size_t>(i)], 0.0f);
  // The largest magnitude lands on 6 x the top scale byte's value (448 at the convention's g).
  float largest = 0.0f;
  for (const float v : values) largest = std::max(largest, std::abs(v));
  EXPECT_EQ(largest, 6.0f * 448.0f);
}

TEST(MoeNvfp4Operand, Mxfp8ValuesAreTheDecodersExactlyInBf16) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 50.0f);
  std::vector<float> x(32 * 16);
  for (float& v : x) v = normal(rng);
  for (int i = 64; i < 96; ++i) x[static_cast<std::size_t>(i)] = 0.0f;  // a zero block
  std::vector<float> values(x.size());
  km::block_operand_values(quant::BlockFormat::mxfp8, x.data(), static_cast<int64_t>(x.size()), 1.0f, values.data());
  for (std::size_t b = 0; b < x.size(); b += 32) {
    float block_amax = 0.0f;
    for (std::size_t i = b; i < b + 32; ++i) block_amax = std::max(block_amax, std::abs(x[i]));
    const quant::BlockScale s = quant::block_scale(quant::BlockFormat::mxfp8, block_amax, 1.0f);
    for (std::size_t i = b; i < b + 32; ++i) {
      const uint8_t code = quant::quantize_element(quant::BlockFormat::mxfp8, x[i], s.factor);
      ASSERT_EQ(values[i], quant::dequantize_element(quant::BlockFormat::mxfp8, code, s.sf, 1.0f)) << i;
      ASSERT_EQ(km::half_bits_to_float(km::float_to_half_bits(values[i], false), false), values[i]) << i;
    }
  }
  for (int i = 64; i < 96; ++i) EXPECT_EQ(values[static_cast<std::size_t>(i)], 0.0f);
}

TEST(MoeNvfp4Operand, ActivationUsesItsDynamicGlobalScale) {
  std::vector<float> a(32);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) - 10.0f;  // amax 21
  std::vector<float> expected(a.size());
  km::block_operand_values(quant::BlockFormat::nvfp4, a.data(), 32, 2688.0f / 21.0f, expected.data());
  EXPECT_EQ(km::nvfp4_activation_values(a), 2688.0f / 21.0f);
  EXPECT_EQ(a, expected);
  std::vector<float> zeros(16, 0.0f);
  EXPECT_EQ(km::nvfp4_activation_values(zeros), 1.0f);
  EXPECT_EQ(zeros, std::vector<float>(16, 0.0f));
}

}  // namespace
}  // namespace kbench
