// The permutation index kernel (kernels/moe/permutation.hpp) against its host reference: row
// offsets and every pick's row, exactly; local windows with tokens routed only to non-local
// experts, experts receiving no token, no local expert, empty batches; and chained after the
// routing kernel on a DeepSeek-V3 routing (its histogram as input). Outputs are poisoned first.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/moe/permutation.hpp"
#include "kernels/moe/routing.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;

// Runs the kernel on `ids` (already on the device at ids_device, or uploaded from `ids`) and
// compares with the reference.
void expect_index_matches(const std::vector<int32_t>& ids, int64_t tokens, int top_k, int offset, int local,
                          CudaStream& stream, const int32_t* counts_on_device = nullptr,
                          const int32_t* ids_on_device = nullptr) {
  SCOPED_TRACE("T " + std::to_string(tokens) + " k " + std::to_string(top_k) + " local " + std::to_string(offset) +
               "+" + std::to_string(local));
  const auto expected = km::permutation_index_reference(ids, offset, local);
  std::vector<int32_t> counts(static_cast<std::size_t>(local));
  for (int e = 0; e < local; ++e) {
    counts[static_cast<std::size_t>(e)] = expected.row_offsets[static_cast<std::size_t>(e) + 1] -
                                          expected.row_offsets[static_cast<std::size_t>(e)];
  }
  DeviceBuffer ids_device(std::max<std::size_t>(1, ids.size()) * sizeof(int32_t));
  DeviceBuffer counts_device(std::max<std::size_t>(1, counts.size()) * sizeof(int32_t));
  DeviceBuffer offsets_device((counts.size() + 1) * sizeof(int32_t));
  DeviceBuffer rows_device(std::max<std::size_t>(1, ids.size()) * sizeof(int32_t));
  testing::to_device(static_cast<char*>(ids_device.get()), ids, stream.get());
  testing::to_device(static_cast<char*>(counts_device.get()), counts, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(offsets_device.get(), 0x7f, offsets_device.bytes(), stream.get()));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(rows_device.get(), 0x7f, rows_device.bytes(), stream.get()));
  km::PermutationIndexParams p;
  p.expert_ids = ids_on_device ? ids_on_device : ids_device.as<int32_t>();
  p.local_counts = counts_on_device ? counts_on_device : counts_device.as<int32_t>();
  p.tokens = tokens;
  p.top_k = top_k;
  p.local_expert_offset = offset;
  p.local_num_experts = local;
  p.row_offsets = offsets_device.as<int32_t>();
  p.permuted_rows = rows_device.as<int32_t>();
  ASSERT_EQ(km::launch_permutation_index(p, stream.get()), cudaSuccess);
  EXPECT_EQ(testing::to_host<int32_t>(offsets_device.get(), local + 1, stream.get()), expected.row_offsets);
  EXPECT_EQ(testing::to_host<int32_t>(rows_device.get(), static_cast<int64_t>(ids.size()), stream.get()),
            expected.permuted_rows);
}

TEST(MoePermutationIndex, MatchesTheHostReference) {
  KBENCH_REQUIRE_GPU();
  CudaStream stream;
  std::mt19937 rng(21);
  struct Shape {
    int64_t tokens;
    int top_k;
    int experts;
    int offset;
    int local;
  };
  const Shape shapes[] = {
      {1, 1, 8, 0, 8},       {257, 8, 256, 0, 256},  {1000, 8, 256, 64, 32},  // EP rank 2 of 8
      {300, 1, 8, 7, 1},     {64, 2, 128, 0, 0},     {0, 8, 256, 0, 256},
      {4096, 8, 256, 0, 256}, {33, 4, 64, 60, 4}};
  for (const Shape& s : shapes) {
    std::uniform_int_distribution<int32_t> expert(0, s.experts - 1);
    std::vector<int32_t> ids(static_cast<std::size_t>(s.tokens * s.top_k));
    for (int32_t& id : ids) id = expert(rng);
    expect_index_matches(ids, s.tokens, s.top_k, s.offset, s.local, stream);
    if (HasFatalFailure()) return;
  }
  // Experts with no token: every pick goes to experts 0 and 5 of 16 local ones.
  std::vector<int32_t> ids(200 * 2);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i % 2 ? 5 : 0;
  expect_index_matches(ids, 200, 2, 0, 16, stream);
}

TEST(MoePermutationIndex, FollowsTheRoutingKernel) {
  KBENCH_REQUIRE_GPU();
  CudaStream stream;
  const int64_t tokens = 4096;
  km::RoutingConfig c;
  c.method = km::RoutingMethod::deepseek_v3;
  c.experts = 256;
  c.top_k = 8;
  c.n_group = 8;
  c.topk_group = 4;
  c.routed_scaling_factor = 2.5f;
  c.local_expert_offset = 32;
  c.local_num_experts = 32;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> logits(static_cast<std::size_t>(tokens * c.experts));
  for (float& z : logits) z = normal(rng);
  DeviceBuffer logits_device(logits.size() * sizeof(float));
  DeviceBuffer ids_device(static_cast<std::size_t>(tokens * c.top_k) * sizeof(int32_t));
  DeviceBuffer weights_device(static_cast<std::size_t>(tokens * c.top_k) * sizeof(float));
  DeviceBuffer counts_device(static_cast<std::size_t>(c.local_num_experts) * sizeof(int32_t));
  testing::to_device(static_cast<char*>(logits_device.get()), logits, stream.get());
  km::RoutingParams r;
  r.config = c;
  r.logits = logits_device.get();
  r.tokens = tokens;
  r.expert_ids = ids_device.as<int32_t>();
  r.weights = weights_device.as<float>();
  r.local_counts = counts_device.as<int32_t>();
  ASSERT_EQ(km::launch_routing(r, stream.get()), cudaSuccess);
  const auto ids = testing::to_host<int32_t>(ids_device.get(), tokens * c.top_k, stream.get());
  expect_index_matches(ids, tokens, c.top_k, c.local_expert_offset, c.local_num_experts, stream,
                       counts_device.as<int32_t>(), ids_device.as<int32_t>());
}

TEST(MoePermutationIndex, RejectsMissingBuffers) {
  KBENCH_REQUIRE_GPU();
  km::PermutationIndexParams p;
  p.tokens = 4;
  p.top_k = 2;
  p.local_num_experts = 8;
  EXPECT_EQ(km::launch_permutation_index(p, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kbench
