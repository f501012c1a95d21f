// time_gpu on a GPU: every timer measures a kernel of known duration alike, CUPTI spans cover all of
// an iteration's work and none of the L2 flush, and failures are loud.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kbench/timing.hpp"

namespace {

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// Busy-waits `duration_ns` of wall-clock time, independent of the SM clock.
__global__ void spin_kernel(std::uint64_t duration_ns) {
  const std::uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < duration_ns) {
  }
}

__global__ void tiny_kernel(int* out) { *out = 1; }

void launch_spin(cudaStream_t stream, std::uint64_t duration_ns) {
  spin_kernel<<<1, 1, 0, stream>>>(duration_ns);
  KBENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_tiny(cudaStream_t stream, int* out) {
  tiny_kernel<<<1, 1, 0, stream>>>(out);
  KBENCH_CUDA_CHECK(cudaGetLastError());
}

std::string warnings_of(const kbench::TimingResult& result) {
  std::string text;
  for (const std::string& warning : result.warnings) text += "\n  warning: " + warning;
  return text;
}

constexpr std::uint64_t kSpinNs = 500'000;
constexpr double kSpinMs = 0.5;
constexpr double kTolerance = 0.03;

struct TimerCase {
  const char* name;
  bool use_cupti;
  bool use_cuda_graph;
  kbench::Timer expected_timer;
};

TEST(TimeGpu, EveryTimerMeasuresAKnownDuration) {
  KBENCH_REQUIRE_GPU();
  const TimerCase cases[] = {
      {"cupti direct", true, false, kbench::Timer::cupti},
      {"cuda events", false, false, kbench::Timer::cuda_events},
      {"cuda graph", false, true, kbench::Timer::cuda_graph},
      {"cupti graph", true, true, kbench::Timer::cupti},
  };
  for (const bool cold_l2 : {true, false}) {
    std::vector<double> medians;
    for (const TimerCase& timer_case : cases) {
      SCOPED_TRACE(std::string(timer_case.name) + (cold_l2 ? ", cold L2" : ", warm L2"));
      const kbench::TimingOptions options{
          .dry_run_iters = 3,
          .num_iters = 20,
          .use_cupti = timer_case.use_cupti,
          .use_cuda_graph = timer_case.use_cuda_graph,
          .calls_per_graph = 5,
          .cold_l2 = cold_l2,
      };
      const kbench::TimingResult result =
          kbench::time_gpu([](cudaStream_t stream, int) { launch_spin(stream, kSpinNs); }, options);

      EXPECT_EQ(result.timer, timer_case.expected_timer)
          << "timed by " << kbench::timer_name(result.timer) << warnings_of(result);
      EXPECT_TRUE(result.warnings.empty()) << warnings_of(result);
      EXPECT_EQ(result.calls_per_graph, timer_case.use_cuda_graph ? options.calls_per_graph : 0);
      EXPECT_EQ(result.samples_ms.size(), static_cast<std::size_t>(options.num_iters));
      EXPECT_EQ(result.stats.count, static_cast<std::size_t>(options.num_iters));
      EXPECT_NEAR(result.stats.median, kSpinMs, kSpinMs * kTolerance);
      EXPECT_LE(result.stats.min, result.stats.median);
      EXPECT_GE(result.stats.max, result.stats.median);
      medians.push_back(result.stats.median);
    }
    for (const double median : medians) EXPECT_NEAR(median, medians.front(), medians.front() * kTolerance);
  }
}

TEST(TimeGpu, CuptiFailsLoudlyWhenNothingIsLaunched) {
  KBENCH_REQUIRE_GPU();
  for (const bool use_cuda_graph : {false, true}) {
    SCOPED_TRACE(use_cuda_graph ? "graph" : "direct");
    const kbench::TimingOptions options{.num_iters = 3, .use_cupti = true, .use_cuda_graph = use_cuda_graph};
    try {
      (void)kbench::time_gpu([](cudaStream_t, int) {}, options);
      ADD_FAILURE() << "time_gpu accepted iterations without any GPU activity";
    } catch (const kbench::CudaError& error) {
      ADD_FAILURE() << "expected the no-activity error, got a CUDA error: " << error.what();
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find("no GPU activity"), std::string::npos) << error.what();
    }
  }
}

TEST(TimeGpu, CuptiSpanCoversEveryKernelOfAnIteration) {
  KBENCH_REQUIRE_GPU();
  constexpr std::uint64_t kEachNs = 100'000;
  constexpr double kBothMs = 0.2;
  for (const bool use_cuda_graph : {false, true}) {
    SCOPED_TRACE(use_cuda_graph ? "graph" : "direct");
    const kbench::TimingOptions options{.num_iters = 20, .use_cupti = true, .use_cuda_graph = use_cuda_graph};
    const kbench::TimingResult result = kbench::time_gpu(
        [](cudaStream_t stream, int) {
          launch_spin(stream, kEachNs);
          launch_spin(stream, kEachNs);
        },
        options);
    ASSERT_EQ(result.timer, kbench::Timer::cupti) << warnings_of(result);
    // A few microseconds of launch and inter-kernel gap per call are real and counted.
    EXPECT_NEAR(result.stats.median, kBothMs, kBothMs * 0.05);
  }
}

TEST(TimeGpu, L2FlushIsNotCounted) {
  KBENCH_REQUIRE_GPU();
  int device = 0;
  int l2_bytes = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  const kbench::DeviceBuffer flush_sized(2 * static_cast<std::size_t>(l2_bytes));
  const kbench::DeviceBuffer out(sizeof(int));

  // What one flush costs, timed as the work under test.
  const kbench::TimingResult flush = kbench::time_gpu(
      [&](cudaStream_t stream, int) {
        KBENCH_CUDA_CHECK(cudaMemsetAsync(flush_sized.get(), 0, flush_sized.bytes(), stream));
      },
      {.num_iters = 10, .use_cupti = true, .use_cuda_graph = false, .cold_l2 = false});
  ASSERT_EQ(flush.timer, kbench::Timer::cupti) << warnings_of(flush);

  for (const bool use_cupti : {true, false}) {
    SCOPED_TRACE(use_cupti ? "cupti" : "cuda events");
    const kbench::TimingResult tiny =
        kbench::time_gpu([&](cudaStream_t stream, int) { launch_tiny(stream, out.as<int>()); },
                         {.num_iters = 20, .use_cupti = use_cupti, .use_cuda_graph = false, .cold_l2 = true});
    EXPECT_LT(tiny.stats.median, flush.stats.median / 4)
        << "tiny kernel " << tiny.stats.median << " ms vs one L2 flush " << flush.stats.median << " ms";
  }
}

TEST(TimeGpu, CallableRotatesOverEveryCopy) {
  KBENCH_REQUIRE_GPU();
  const kbench::DeviceBuffer out(sizeof(int));
  for (const bool use_cuda_graph : {false, true}) {
    SCOPED_TRACE(use_cuda_graph ? "graph" : "direct");
    const kbench::TimingOptions options{
        .dry_run_iters = 2,
        .num_iters = 5,
        .use_cupti = true,
        .use_cuda_graph = use_cuda_graph,
        .calls_per_graph = 4,
        .num_copies = 3,
    };
    std::vector<int> copies_seen;
    const kbench::TimingResult result = kbench::time_gpu(
        [&](cudaStream_t stream, int copy) {
          copies_seen.push_back(copy);
          launch_tiny(stream, out.as<int>());
        },
        options);
    ASSERT_TRUE(result.warnings.empty()) << warnings_of(result);

    // Host calls: the warm-up, then the captured calls (graph) or one per measured iteration.
    const int measured_calls = use_cuda_graph ? options.calls_per_graph : options.num_iters;
    ASSERT_EQ(copies_seen.size(), static_cast<std::size_t>(options.dry_run_iters + measured_calls));
    for (const int copy : copies_seen) {
      EXPECT_GE(copy, 0);
      EXPECT_LT(copy, options.num_copies);
    }
    const std::vector<int> measured(copies_seen.end() - measured_calls, copies_seen.end());
    const std::vector<int> expected = use_cuda_graph ? std::vector<int>{0, 1, 2, 0} : std::vector<int>{0, 1, 2, 0, 1};
    EXPECT_EQ(measured, expected);
  }
}

}  // namespace

namespace {

// Reads `count` 16-byte words: a kernel whose time depends on where its data sits.
__global__ void read_buffer_kernel(const uint4* data, std::size_t count, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    acc ^= data[i].x ^ data[i].w;
  }
  if (acc == 0xFFFFFFFFu) *sink = acc;
}

void launch_read(cudaStream_t stream, const kbench::DeviceBuffer& buffer, const kbench::DeviceBuffer& sink) {
  read_buffer_kernel<<<264, 512, 0, stream>>>(buffer.as<const uint4>(), buffer.bytes() / sizeof(uint4),
                                              sink.as<unsigned>());
  KBENCH_CUDA_CHECK(cudaGetLastError());
}

TEST(TimeGpu, ColdL2IsReallyCold) {
  KBENCH_REQUIRE_GPU();
  // 16 MiB fits in the L2 of every GPU kbench targets: warm reads come from the L2, cold ones
  // from DRAM, which is several times slower at this size.
  const kbench::DeviceBuffer data(16u << 20);
  const kbench::DeviceBuffer sink(sizeof(unsigned));
  KBENCH_CUDA_CHECK(cudaMemset(data.get(), 0, data.bytes()));
  const auto time = [&](bool cold) {
    return kbench::time_gpu([&](cudaStream_t s, int) { launch_read(s, data, sink); },
                            {.num_iters = 30, .use_cupti = true, .use_cuda_graph = false, .cold_l2 = cold});
  };
  const kbench::TimingResult warm = time(false);
  const kbench::TimingResult cold = time(true);
  ASSERT_EQ(cold.timer, kbench::Timer::cupti) << warnings_of(cold);
  EXPECT_GT(cold.stats.median, 1.3 * warm.stats.median)
      << "cold " << cold.stats.median << " ms, warm " << warm.stats.median << " ms";
}

TEST(TimeGpu, GraphCallsRotateOntoColdCopies) {
  KBENCH_REQUIRE_GPU();
  int device = 0;
  int l2_bytes = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  constexpr std::size_t kBytes = 16u << 20;
  constexpr int kCalls = 10;
  const int copies = kbench::cold_l2_copies(kBytes, kCalls, static_cast<std::size_t>(l2_bytes));
  ASSERT_GT(copies, 1);
  std::vector<kbench::DeviceBuffer> data;
  for (int i = 0; i < copies; ++i) {
    data.emplace_back(kBytes);
    KBENCH_CUDA_CHECK(cudaMemset(data.back().get(), 0, kBytes));
  }
  const kbench::DeviceBuffer sink(sizeof(unsigned));
  const auto time = [&](int num_copies) {
    return kbench::time_gpu([&](cudaStream_t s, int copy) { launch_read(s, data.at(copy), sink); },
                            {.num_iters = 20, .use_cupti = true, .use_cuda_graph = true,
                             .calls_per_graph = kCalls, .cold_l2 = true, .num_copies = num_copies});
  };
  const kbench::TimingResult one_copy = time(1);     // calls 2..10 of a replay find it warm
  const kbench::TimingResult rotated = time(copies);  // every call starts cold
  ASSERT_EQ(rotated.calls_per_graph, kCalls) << warnings_of(rotated);
  EXPECT_GT(rotated.stats.median, 1.3 * one_copy.stats.median)
      << "rotated " << rotated.stats.median << " ms, one copy " << one_copy.stats.median << " ms";
}

}  // namespace

TEST(TimeGpu, NoiseAwareStoppingMeasuresUntilTheTarget) {
  KBENCH_REQUIRE_GPU();
  const auto launch = [](cudaStream_t stream, int) { launch_spin(stream, 20'000); };
  kbench::TimingOptions options{.num_iters = 10, .calls_per_graph = 5};
  options.max_noise = 0.002;
  options.min_time_s = 0.05;
  options.timeout_s = 10;
  const kbench::TimingResult r = kbench::time_gpu(launch, options);
  EXPECT_TRUE(r.noise_reached);
  EXPECT_LE(r.stats.noise, options.max_noise);
  // At least min_time of GPU time: 0.05 s of 20 us calls in replays of 5 is >= 500 replays.
  EXPECT_GE(r.samples_ms.size(), 450u);
  EXPECT_EQ(r.samples_ms.size() % 10, 0u) << "whole batches of num_iters";

  // A target no measurement reaches stops at the timeout and says so.
  options.max_noise = 1e-9;
  options.min_time_s = 0;
  options.timeout_s = 0.3;
  const auto start = std::chrono::steady_clock::now();
  const kbench::TimingResult capped = kbench::time_gpu(launch, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 3.0);
  EXPECT_EQ(capped.noise_reached, capped.stats.noise <= options.max_noise);
}

TEST(TimeGpu, ClocksAndPowerAreRecorded) {
  KBENCH_REQUIRE_GPU();
  const kbench::TimingResult r =
      kbench::time_gpu([](cudaStream_t stream, int) { launch_spin(stream, kSpinNs); }, {.num_iters = 40});
  const kbench::GpuConditions& c = r.conditions;
  ASSERT_TRUE(c.available) << c.why_not;
  EXPECT_GE(c.samples, 2);
  EXPECT_GT(c.sm_clock_max_mhz, 500);
  EXPECT_GT(c.sm_clock_mhz, 100);
  EXPECT_LE(c.sm_clock_mhz, c.sm_clock_max_mhz);
  EXPECT_LE(c.sm_clock_min_mhz, c.sm_clock_mhz);
  EXPECT_GT(c.memory_clock_mhz, 100);
  EXPECT_GT(c.power_w, 10);
  EXPECT_GT(c.power_limit_w, 100);
  EXPECT_GT(c.temperature_c, 0);
  const kbench::TimingResult quiet = kbench::time_gpu([](cudaStream_t stream, int) { launch_spin(stream, 1000); },
                                                      {.num_iters = 5, .monitor_gpu = false});
  EXPECT_FALSE(quiet.conditions.available);
}
