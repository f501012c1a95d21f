// World on two GPUs, one process a GPU: this test binary, started twice by launch_local as
// `kbench --nproc 2` starts kbench, runs a WorldRank test as the two ranks. NCCL's set-up, both host
// collectives, CUDA IPC between the ranks, and a rank that leaves: the other's collective ends in an
// error within the timeout instead of a hang. Skipped below 2 GPUs.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "core/child_process.hpp"
#include "dist/launcher.hpp"
#include "dist/world.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"

namespace kbench::dist {
namespace {

bool is_a_rank() { return process_getenv("KBENCH_RANK").has_value(); }

std::unique_ptr<World> join_world() {
  const RankEnvironment env = discover_ranks(process_getenv);
  return World::create(env, rendezvous_options(env, process_getenv),
                       command_digest(std::vector<std::string>{"test_world"}));
}

// Runs WorldRank.<test> as two ranks with KBENCH_DIST_TIMEOUT=`timeout`; their output is ours.
void run_as_two_ranks(const std::string& test, const char* timeout) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 2) {
    (void)cudaGetLastError();
    GTEST_SKIP() << "needs 2 GPUs, has " << devices;
  }
  ::setenv("KBENCH_DIST_TIMEOUT", timeout, 1);
  std::ostringstream err;
  const int status = launch_local(2, self_executable(), {"--gtest_filter=WorldRank." + test}, err);
  ::unsetenv("KBENCH_DIST_TIMEOUT");
  EXPECT_EQ(status, 0) << err.str();
}

TEST(WorldRank, CollectivesAndSharedMemory) {
  if (!is_a_rank()) GTEST_SKIP() << "a rank of World.TwoRanksShareCollectivesAndMemory";
  const auto world = join_world();
  ASSERT_EQ(world->size(), 2);
  const int rank = world->rank();
  const int peer = 1 - rank;
  EXPECT_EQ(world->device(), rank);

  const std::vector<double> mine = {static_cast<double>(rank), 10.0 - rank, -1.5};
  EXPECT_EQ(world->max_over_ranks(mine), (std::vector<double>{1.0, 10.0, -1.5}));
  EXPECT_TRUE(world->all(true));
  EXPECT_FALSE(world->all(rank == 0));

  const std::string text = "from rank " + std::to_string(rank);
  const auto gathered = world->all_gather(std::as_bytes(std::span(text)));
  ASSERT_EQ(gathered.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(gathered[r].data()), gathered[r].size()),
              "from rank " + std::to_string(r));
  }

  // Each rank fills its buffer with rank + 1 and reads the other's through the IPC mapping.
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  DeviceBuffer buffer(kBytes);
  KBENCH_CUDA_CHECK(cudaMemset(buffer.get(), rank + 1, kBytes));
  KBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  const auto pointers = world->share_device_memory(buffer.get(), kBytes);  // collective: both filled
  ASSERT_EQ(pointers.size(), 2u);
  EXPECT_EQ(pointers[rank], buffer.get());
  std::vector<unsigned char> seen(kBytes);
  KBENCH_CUDA_CHECK(cudaMemcpy(seen.data(), pointers[peer], kBytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ(std::count(seen.begin(), seen.end(), static_cast<unsigned char>(peer + 1)), static_cast<long>(kBytes));
  (void)world->max_over_ranks(mine);  // neither unmaps nor frees while the other reads
  world->release_device_memory(pointers);
  (void)world->max_over_ranks(mine);
}

TEST(World, TwoRanksShareCollectivesAndMemory) { run_as_two_ranks("CollectivesAndSharedMemory", "60"); }

TEST(WorldRank, ALeavingRankEndsTheOthersWait) {
  if (!is_a_rank()) GTEST_SKIP() << "a rank of World.ALeavingRankEndsTheOthersWait";
  const auto world = join_world();
  if (world->rank() == 1) return;  // leaves before the collective
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> value = {1.0};
  try {
    (void)world->max_over_ranks(value);
    ADD_FAILURE() << "max_over_ranks returned without rank 1";
  } catch (const std::runtime_error& error) {
    // A timeout, or NCCL noticing the peer's end first.
    const std::string message = error.what();
    EXPECT_TRUE(message == "rank 0: max_over_ranks (ncclAllReduce) did not finish within 3 s: another rank died, "
                           "hung or left the step" ||
                message.starts_with("rank 0: max_over_ranks (ncclAllReduce) failed: NCCL "))
        << message;
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0);
}

TEST(World, ALeavingRankEndsTheOthersWait) { run_as_two_ranks("ALeavingRankEndsTheOthersWait", "3"); }

}  // namespace
}  // namespace kbench::dist
