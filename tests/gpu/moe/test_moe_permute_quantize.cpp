// The permutation's gather with the fused FP8 1x128 quantization (kernels/moe/permute_quantize.hpp)
// against its host reference, exactly (codes and scales): hidden 128 to DeepSeek-V3's 7168, k = 1
// and 8, a local expert window with tokens routed only to non-local experts. Outputs are poisoned.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/moe/permutation.hpp"
#include "kernels/moe/permute_quantize.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;

void expect_gather_matches(int64_t tokens, int top_k, int64_t hidden_size, int experts, int offset, int local,
                           uint32_t seed) {
  SCOPED_TRACE("T " + std::to_string(tokens) + " k " + std::to_string(top_k) + " H " + std::to_string(hidden_size) +
               " local " + std::to_string(offset) + "+" + std::to_string(local) + "/" + std::to_string(experts));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);  // the reference's hidden = 2 * normal
  std::uniform_int_distribution<int32_t> expert(0, experts - 1);
  std::vector<int32_t> ids(static_cast<std::size_t>(tokens * top_k));
  for (int32_t& id : ids) id = expert(rng);
  const auto index = km::permutation_index_reference(ids, offset, local);
  const int64_t rows = index.row_offsets.back();
  std::vector<float> hidden(static_cast<std::size_t>(tokens * hidden_size));
  std::vector<uint16_t> hidden_bits(hidden.size());
  for (std::size_t i = 0; i < hidden.size(); ++i) {
    uint32_t bits;
    const float x = normal(rng);
    std::memcpy(&bits, &x, sizeof bits);
    bits &= 0xffff0000u;
    hidden_bits[i] = static_cast<uint16_t>(bits >> 16);
    std::memcpy(&hidden[i], &bits, sizeof bits);
  }
  const int64_t blocks = hidden_size / km::kPermuteBlock;
  std::vector<uint8_t> expected(static_cast<std::size_t>(rows * hidden_size), 0x7f);
  std::vector<float> expected_scale(static_cast<std::size_t>(rows * blocks), -1.0f);
  km::permute_quantize_reference(hidden, index.permuted_rows, tokens, top_k, hidden_size, expected, expected_scale);

  CudaStream stream;
  DeviceBuffer hidden_device(std::max<std::size_t>(1, hidden_bits.size()) * sizeof(uint16_t));
  DeviceBuffer rows_device(std::max<std::size_t>(1, ids.size()) * sizeof(int32_t));
  DeviceBuffer out_device(std::max<int64_t>(1, rows * hidden_size));
  DeviceBuffer scale_device(static_cast<std::size_t>(std::max<int64_t>(1, rows * blocks)) * sizeof(float));
  testing::to_device(static_cast<char*>(hidden_device.get()), hidden_bits, stream.get());
  testing::to_device(static_cast<char*>(rows_device.get()), index.permuted_rows, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(out_device.get(), 0x7f, out_device.bytes(), stream.get()));
  testing::to_device(static_cast<char*>(scale_device.get()), std::vector<float>(static_cast<std::size_t>(rows * blocks), -1.0f),
                     stream.get());
  km::PermuteQuantizeParams p;
  p.hidden = hidden_device.as<uint16_t>();
  p.permuted_rows = rows_device.as<int32_t>();
  p.tokens = tokens;
  p.top_k = top_k;
  p.hidden_size = hidden_size;
  p.out = out_device.as<uint8_t>();
  p.out_scale = scale_device.as<float>();
  ASSERT_EQ(km::launch_permute_quantize(p, stream.get()), cudaSuccess);
  EXPECT_EQ(testing::to_host<uint8_t>(out_device.get(), rows * hidden_size, stream.get()), expected);
  EXPECT_EQ(testing::to_host<float>(scale_device.get(), rows * blocks, stream.get()), expected_scale);
}

TEST(MoePermuteQuantize, MatchesTheHostReferenceExactly) {
  KBENCH_REQUIRE_GPU();
  expect_gather_matches(1, 1, 128, 8, 0, 8, 1);
  expect_gather_matches(257, 8, 7168, 256, 0, 256, 2);   // DeepSeek-V3
  expect_gather_matches(500, 8, 1024, 256, 96, 32, 3);   // EP: many tokens have no local pick
  expect_gather_matches(64, 1, 512, 16, 15, 1, 4);
  expect_gather_matches(0, 8, 7168, 256, 0, 256, 5);
}

TEST(MoePermuteQuantize, RejectsUnalignedHidden) {
  KBENCH_REQUIRE_GPU();
  km::PermuteQuantizeParams p;
  p.top_k = 1;
  p.hidden_size = 100;
  EXPECT_EQ(km::launch_permute_quantize(p, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kbench
