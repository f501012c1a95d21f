// The gated activation kernel (kernels/moe/gated_activation.hpp) against its host reference:
// SwiGLU and GeGLU, I = 128 to DeepSeek-V3's 2048; every block's scale exactly; every e4m3 code
// within one step of the reference's (the kernel's expf/erff and the host's exp/erf may differ by
// an ulp, which moves a value across an e4m3 rounding boundary at most one step) and at least 99%
// identical; rows past the device-side row count untouched (the output is poisoned first).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/moe/gated_activation.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;

uint16_t bf16_bits_truncated(float value, float& exact) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits &= 0xffff0000u;
  std::memcpy(&exact, &bits, sizeof exact);
  return static_cast<uint16_t>(bits >> 16);
}

void expect_activation_matches(km::GatedActivation activation, int64_t max_rows, int32_t rows, int64_t inter,
                               uint32_t seed) {
  SCOPED_TRACE("activation " + std::to_string(static_cast<int>(activation)) + " rows " +
               std::to_string(rows) + "/" + std::to_string(max_rows) + " I " + std::to_string(inter));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> fc1(static_cast<std::size_t>(max_rows * 2 * inter));
  std::vector<uint16_t> fc1_bits(fc1.size());
  for (std::size_t i = 0; i < fc1.size(); ++i) fc1_bits[i] = bf16_bits_truncated(normal(rng), fc1[i]);
  std::vector<uint8_t> expected;
  std::vector<float> expected_scale;
  km::gated_activation_reference(activation, fc1, rows, inter, expected, expected_scale);

  CudaStream stream;
  const int64_t blocks = inter / km::kActivationBlock;
  DeviceBuffer fc1_device(fc1_bits.size() * sizeof(uint16_t));
  DeviceBuffer count_device(sizeof(int32_t));
  DeviceBuffer out_device(static_cast<std::size_t>(max_rows * inter));
  DeviceBuffer scale_device(static_cast<std::size_t>(max_rows * blocks) * sizeof(float));
  testing::to_device(static_cast<char*>(fc1_device.get()), fc1_bits, stream.get());
  testing::to_device(static_cast<char*>(count_device.get()), std::vector<int32_t>{rows}, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(out_device.get(), 0x7f, out_device.bytes(), stream.get()));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(scale_device.get(), 0xff, scale_device.bytes(), stream.get()));
  km::GatedActivationParams p;
  p.activation = activation;
  p.fc1 = fc1_device.as<uint16_t>();
  p.row_count = count_device.as<int32_t>();
  p.max_rows = max_rows;
  p.intermediate = inter;
  p.out = out_device.as<uint8_t>();
  p.out_scale = scale_device.as<float>();
  ASSERT_EQ(km::launch_gated_activation(p, stream.get()), cudaSuccess);
  const auto out = testing::to_host<uint8_t>(out_device.get(), max_rows * inter, stream.get());
  const auto scale = testing::to_host<float>(scale_device.get(), max_rows * blocks, stream.get());

  for (int64_t i = 0; i < rows * blocks; ++i) ASSERT_EQ(scale[static_cast<std::size_t>(i)], expected_scale[static_cast<std::size_t>(i)]) << i;
  int64_t identical = 0;
  for (int64_t i = 0; i < rows * inter; ++i) {
    const int got = out[static_cast<std::size_t>(i)];
    const int want = expected[static_cast<std::size_t>(i)];
    identical += got == want;
    const bool near_zero = (got & 0x7f) <= 1 && (want & 0x7f) <= 1;
    ASSERT_TRUE(near_zero || ((got & 0x80) == (want & 0x80) && std::abs((got & 0x7f) - (want & 0x7f)) <= 1))
        << "element " << i << ": code " << got << " vs " << want;
  }
  EXPECT_GE(identical, rows * inter * 99 / 100);
  for (int64_t i = rows * inter; i < max_rows * inter; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], 0x7f) << i;
  for (int64_t i = rows * blocks; i < max_rows * blocks; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &scale[static_cast<std::size_t>(i)], sizeof bits);
    ASSERT_EQ(bits, 0xffffffffu) << i;
  }
}

TEST(MoeGatedActivation, MatchesTheHostReference) {
  KBENCH_REQUIRE_GPU();
  for (km::GatedActivation activation : {km::GatedActivation::swiglu, km::GatedActivation::geglu,
                                         km::GatedActivation::geglu_tanh, km::GatedActivation::relu2}) {
    expect_activation_matches(activation, 1, 1, 128, 1);
    expect_activation_matches(activation, 300, 217, 256, 2);  // rows past the device count untouched
    expect_activation_matches(activation, 1024, 1024, 2048, 3);  // DeepSeek-V3's intermediate
    expect_activation_matches(activation, 64, 0, 2048, 4);    // no row in use
  }
}

TEST(MoeGatedActivation, RejectsUnalignedIntermediate) {
  KBENCH_REQUIRE_GPU();
  km::GatedActivationParams p;
  p.intermediate = 192;
  EXPECT_EQ(km::launch_gated_activation(p, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kbench
