// The permutation index's host reference (kernels/moe/permutation.hpp) on a hand-made routing:
// expert-contiguous rows in (token, pick) order, empty experts, non-local picks.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/moe/permutation.hpp"

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

}  // namespace
}  // namespace kbench
