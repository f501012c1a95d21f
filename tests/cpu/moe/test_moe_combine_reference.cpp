// The combine's host reference (kernels/moe/combine.hpp) on a hand-made case: weighted sum in pick
// order, non-local picks skipped, a token with no local pick gets zeros, bf16 rounding to even.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/moe/combine.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;

TEST(MoeCombineReference, WeightedSumOfThePicksRows) {
  // 3 rows of hidden 2: {1, 2}, {4, 8}, {-1, 0.5}. Token 0 picks rows 2 and 0; token 1 picks a
  // non-local expert and row 1; token 2 picks only non-local experts.
  std::vector<uint16_t> rows;
  for (float v : {1.0f, 2.0f, 4.0f, 8.0f, -1.0f, 0.5f}) rows.push_back(km::combine_bf16_bits(v));
  const std::vector<int32_t> permuted{2, 0, -1, 1, -1, -1};
  const std::vector<float> weights{0.5f, 2.0f, 3.0f, 0.25f, 1.0f, 1.0f};
  const auto out = km::combine_reference(rows, permuted, weights, 3, 2, 2);
  std::vector<uint16_t> expected;
  for (float v : {-0.5f + 2.0f, 0.25f + 4.0f, 1.0f, 2.0f, 0.0f, 0.0f}) expected.push_back(km::combine_bf16_bits(v));
  EXPECT_EQ(out, expected);
}

TEST(MoeCombineReference, RoundsToNearestEven) {
  EXPECT_EQ(km::combine_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(km::combine_bf16_bits(1.0f + 1.0f / 256.0f), 0x3f80);  // halfway, to the even below
  EXPECT_EQ(km::combine_bf16_bits(1.0f + 3.0f / 256.0f), 0x3f82);  // halfway, to the even above
  EXPECT_EQ(km::combine_bf16_bits(-2.0f), 0xc000);
}

}  // namespace
}  // namespace kbench
