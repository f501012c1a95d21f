// The combine kernel (kernels/moe/combine.hpp) against its host reference, bit for bit: k = 1, 2
// and 8, hidden 8 to DeepSeek-V3's 7168, non-local picks, tokens with no local pick, empty batch.
// The output is poisoned before the launch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/moe/combine.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;

void expect_combine_matches(int64_t tokens, int top_k, int64_t hidden, double non_local_fraction, uint32_t seed) {
  SCOPED_TRACE("T " + std::to_string(tokens) + " k " + std::to_string(top_k) + " H " + std::to_string(hidden));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  // Every local pick gets its own row, in a shuffled order (as the permutation would place them).
  std::vector<int32_t> permuted(static_cast<std::size_t>(tokens * top_k), -1);
  int32_t rows = 0;
  for (int32_t& row : permuted) {
    if (uniform(rng) >= non_local_fraction) row = rows++;
  }
  std::vector<int32_t> order(static_cast<std::size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (int32_t& row : permuted) {
    if (row >= 0) row = order[static_cast<std::size_t>(row)];
  }
  std::vector<float> weights(permuted.size());
  for (float& w : weights) w = normal(rng);
  std::vector<uint16_t> expert_rows(static_cast<std::size_t>(rows * hidden));
  for (uint16_t& x : expert_rows) x = km::combine_bf16_bits(normal(rng));
  const auto expected = km::combine_reference(expert_rows, permuted, weights, tokens, top_k, hidden);

  CudaStream stream;
  DeviceBuffer rows_device(std::max<std::size_t>(1, expert_rows.size()) * sizeof(uint16_t));
  DeviceBuffer permuted_device(std::max<std::size_t>(1, permuted.size()) * sizeof(int32_t));
  DeviceBuffer weights_device(std::max<std::size_t>(1, weights.size()) * sizeof(float));
  DeviceBuffer output_device(std::max<std::size_t>(1, expected.size()) * sizeof(uint16_t));
  testing::to_device(static_cast<char*>(rows_device.get()), expert_rows, stream.get());
  testing::to_device(static_cast<char*>(permuted_device.get()), permuted, stream.get());
  testing::to_device(static_cast<char*>(weights_device.get()), weights, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(output_device.get(), 0xff, output_device.bytes(), stream.get()));
  km::CombineParams p;
  p.expert_rows = rows_device.as<uint16_t>();
  p.permuted_rows = permuted_device.as<int32_t>();
  p.weights = weights_device.as<float>();
  p.tokens = tokens;
  p.top_k = top_k;
  p.hidden = hidden;
  p.output = output_device.as<uint16_t>();
  ASSERT_EQ(km::launch_combine(p, stream.get()), cudaSuccess);
  EXPECT_EQ(testing::to_host<uint16_t>(output_device.get(), static_cast<int64_t>(expected.size()), stream.get()),
            expected);
}

TEST(MoeCombine, MatchesTheHostReferenceExactly) {
  KBENCH_REQUIRE_GPU();
  expect_combine_matches(1, 1, 8, 0.0, 1);
  expect_combine_matches(37, 2, 1032, 0.0, 2);    // hidden not a multiple of the CTA's 1024 columns
  expect_combine_matches(128, 8, 7168, 0.0, 3);   // DeepSeek-V3
  expect_combine_matches(64, 8, 2048, 0.75, 4);   // most picks on other ranks; some tokens have none
  expect_combine_matches(16, 1, 64, 1.0, 5);      // no local pick at all: zeros
  expect_combine_matches(0, 8, 7168, 0.0, 6);
}

TEST(MoeCombine, RejectsUnalignedHidden) {
  KBENCH_REQUIRE_GPU();
  km::CombineParams p;
  p.top_k = 1;
  p.hidden = 12;
  EXPECT_EQ(km::launch_combine(p, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kbench
