// The permutation index's host reference (kernels/moe/permutation.hpp) on a hand-made routing:
// expert-contiguous rows in (token, pick) order, empty experts, non-local picks; and the gather's
// reference: a token's quantized row written to each of its local rows, nothing for non-local picks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/moe/permutation.hpp"
#include "kernels/moe/permute_quantize.hpp"

namespace kbench {
namespace {

TEST(MoePermutationReference, ExpertContiguousRowsInTokenOrder) {
  // 4 tokens, k = 2, local experts 2..5 (expert 3 receives nothing; 0, 1 and 6 are not local).
  const std::vector<int32_t> ids{2, 5,   //
                                 0, 6,   // only non-local experts
                                 5, 2,   //
                                 4, 1};
  const auto index = kernels::moe::permutation_index_reference(ids, 2, 4);
  EXPECT_EQ(index.row_offsets, (std::vector<int32_t>{0, 2, 2, 3, 5}));
  EXPECT_EQ(index.permuted_rows, (std::vector<int32_t>{0, 3, -1, -1, 4, 1, 2, -1}));
}

TEST(MoePermutationReference, NoLocalExpert) {
  const auto index = kernels::moe::permutation_index_reference({3, 1, 0, 2}, 0, 0);
  EXPECT_EQ(index.row_offsets, (std::vector<int32_t>{0}));
  EXPECT_EQ(index.permuted_rows, (std::vector<int32_t>{-1, -1, -1, -1}));
}

TEST(MoePermuteQuantizeReference, WritesEachLocalPicksRow) {
  // Token 0 -> rows 1 and (non-local); token 1 -> row 0 only. Hidden 128, all 0.5 (token 0) and 2.
  std::vector<float> hidden(256, 0.5f);
  std::fill(hidden.begin() + 128, hidden.end(), 2.0f);
  std::vector<uint8_t> out(2 * 128, 0xee);
  std::vector<float> scale(2, -1.0f);
  kernels::moe::permute_quantize_reference(hidden, {1, -1, 0, -1}, 2, 2, 128, out, scale);
  EXPECT_EQ(scale, (std::vector<float>{1.0f / 128, 1.0f / 512}));  // 2/448 -> 1/128; 0.5/448 -> 1/512
  EXPECT_EQ(kernels::quant::e4m3_to_float(out[0]) * scale[0], 2.0f);
  EXPECT_EQ(kernels::quant::e4m3_to_float(out[128]) * scale[1], 0.5f);
}

}  // namespace
}  // namespace kbench
