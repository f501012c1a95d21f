// The gated activation's host reference (kernels/moe/gated_activation.hpp): moe.md's column
// convention ([0, I) up, [I, 2I) gate), SiLU and exact-erf GELU values, and the 1x128 groupwise
// FP8 quantization of each block (power-of-two scale at or above amax / 448).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/moe/gated_activation.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;

TEST(MoeGatedActivationReference, SwigluAndGegluValues) {
  EXPECT_NEAR(km::gated_activation_value(km::GatedActivation::swiglu, 3.0f, 1.0f), 3.0 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(km::gated_activation_value(km::GatedActivation::geglu, 2.0f, 1.0f), 2.0 * 0.8413447460685429, 1e-6);
  EXPECT_EQ(km::gated_activation_value(km::GatedActivation::swiglu, 5.0f, 0.0f), 0.0f);
}

TEST(MoeGatedActivationReference, QuantizesEachBlockOfTheProduct) {
  // One row, I = 256: up = 1 everywhere, gate = 0 except one large gate per block, so each block's
  // amax is that one activation.
  const int64_t inter = 256;
  std::vector<float> fc1(2 * inter, 0.0f);
  for (int64_t c = 0; c < inter; ++c) fc1[static_cast<std::size_t>(c)] = 1.0f;
  fc1[static_cast<std::size_t>(inter + 5)] = 100.0f;    // block 0: silu(100) = 100
  fc1[static_cast<std::size_t>(inter + 200)] = 10.0f;   // block 1: silu(10) ~ 9.99955
  std::vector<uint8_t> out;
  std::vector<float> scale;
  km::gated_activation_reference(km::GatedActivation::swiglu, fc1, 1, inter, out, scale);
  ASSERT_EQ(scale.size(), 2u);
  EXPECT_EQ(scale[0], 0.25f);       // 100 / 448 = 0.223 -> 0.25
  EXPECT_EQ(scale[1], 1.0f / 32);   // 9.99955 / 448 = 0.0223 -> 1/32
  EXPECT_EQ(kernels::quant::e4m3_to_float(out[5]) * scale[0], 96.0f);   // 400 -> e4m3 384 (step 32), x 0.25
  EXPECT_EQ(out[0], 0);                                                  // silu(0) = 0
  EXPECT_NEAR(kernels::quant::e4m3_to_float(out[200]) * scale[1], 10.0f, 0.5f);
}

}  // namespace
}  // namespace kbench
