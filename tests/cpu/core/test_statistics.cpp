// summarize(), cold_l2_copies() and time_gpu's option checks: all host-side, no GPU needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "kbench/statistics.hpp"
#include "kbench/timing.hpp"

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kL2 = 50 * kMiB;  // an H100's L2

TEST(Summarize, OddCountTakesTheMiddleValue) {
  const std::vector<double> samples{5.0, 1.0, 3.0};
  const kbench::Statistics stats = kbench::summarize(samples);
  EXPECT_DOUBLE_EQ(stats.median, 3.0);
  EXPECT_DOUBLE_EQ(stats.std, std::sqrt(8.0 / 3.0));  // deviations 2, -2, 0 over n = 3
  EXPECT_DOUBLE_EQ(stats.min, 1.0);
  EXPECT_DOUBLE_EQ(stats.max, 5.0);
  EXPECT_EQ(stats.count, 3u);
}

TEST(Summarize, EvenCountAveragesTheTwoMiddleValues) {
  const std::vector<double> samples{4.0, 1.0, 3.0, 2.0};
  const kbench::Statistics stats = kbench::summarize(samples);
  EXPECT_DOUBLE_EQ(stats.median, 2.5);
  EXPECT_DOUBLE_EQ(stats.std, std::sqrt(1.25));
  EXPECT_EQ(stats.count, 4u);
}

TEST(Summarize, StandardDeviationDividesByN) {
  // Mean 5, squared deviations sum to 32: population std 2 (the sample std would be 2.138...).
  const std::vector<double> samples{2, 4, 4, 4, 5, 5, 7, 9};
  const kbench::Statistics stats = kbench::summarize(samples);
  EXPECT_DOUBLE_EQ(stats.std, 2.0);
  EXPECT_DOUBLE_EQ(stats.median, 4.5);
  EXPECT_DOUBLE_EQ(stats.min, 2.0);
  EXPECT_DOUBLE_EQ(stats.max, 9.0);
  EXPECT_EQ(stats.count, 8u);
}

TEST(Summarize, SingleSample) {
  const std::vector<double> samples{0.125};
  const kbench::Statistics stats = kbench::summarize(samples);
  EXPECT_DOUBLE_EQ(stats.median, 0.125);
  EXPECT_DOUBLE_EQ(stats.std, 0.0);
  EXPECT_DOUBLE_EQ(stats.min, 0.125);
  EXPECT_DOUBLE_EQ(stats.max, 0.125);
  EXPECT_EQ(stats.count, 1u);
}

TEST(Summarize, EmptySampleThrows) {
  EXPECT_THROW((void)kbench::summarize({}), std::invalid_argument);
}

TEST(ColdL2Copies, SmallWorkingSetsSweepTwiceTheL2) {
  // (copies - 1) other copies, >= 2x L2 bytes, run between two uses of one copy.
  EXPECT_EQ(kbench::cold_l2_copies(10 * kMiB, 100, kL2), 11);  // 100 MiB / 10 MiB + 1
  EXPECT_EQ(kbench::cold_l2_copies(30 * kMiB, 100, kL2), 5);   // ceil(100 / 30) + 1
  EXPECT_EQ(kbench::cold_l2_copies(kL2, 100, kL2), 3);
}

TEST(ColdL2Copies, NeverMoreThanTheCallsInAGraph) {
  EXPECT_EQ(kbench::cold_l2_copies(1 * kMiB, 10, kL2), 10);
  EXPECT_EQ(kbench::cold_l2_copies(1, 7, kL2), 7);
}

TEST(ColdL2Copies, WorkingSetBeyondTwiceTheL2NeedsNoRotation) {
  EXPECT_EQ(kbench::cold_l2_copies(2 * kL2, 10, kL2), 1);
  EXPECT_EQ(kbench::cold_l2_copies(2 * kL2 - 1, 10, kL2), 3);
  EXPECT_EQ(kbench::cold_l2_copies(10 * kL2, 10, kL2), 1);
}

TEST(ColdL2Copies, DegenerateInputsGiveAtLeastOneCopy) {
  EXPECT_EQ(kbench::cold_l2_copies(0, 10, kL2), 1);
  EXPECT_EQ(kbench::cold_l2_copies(10 * kMiB, 0, kL2), 1);
  EXPECT_EQ(kbench::cold_l2_copies(10 * kMiB, -3, kL2), 1);
  EXPECT_EQ(kbench::cold_l2_copies(10 * kMiB, 10, 0), 1);  // no L2: nothing to keep warm
}

// Options are checked before any CUDA call, so this runs without a GPU.
void expect_rejected(const kbench::TimingOptions& options, const std::string& field) {
  try {
    (void)kbench::time_gpu([](cudaStream_t, int) { FAIL() << "an invalid option must stop time_gpu before any call"; },
                           options);
    ADD_FAILURE() << "expected std::invalid_argument naming " << field;
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
  }
}

TEST(TimeGpuOptions, InvalidValuesAreRejectedByName) {
  expect_rejected({.num_iters = 0}, "num_iters");
  expect_rejected({.dry_run_iters = -1}, "dry_run_iters");
  expect_rejected({.calls_per_graph = 0}, "calls_per_graph");
  expect_rejected({.max_noise = -0.1}, "max_noise");
  expect_rejected({.min_time_s = -1}, "min_time_s");
  expect_rejected({.timeout_s = 0}, "timeout_s");
  expect_rejected({.num_copies = 0}, "num_copies");
}

}  // namespace

namespace {

TEST(Summarize, NoiseIsTheMediansConfidenceHalfWidth) {
  // 100 samples 1.00 .. 1.99: the 95% interval of the median spans ranks 49.5 -+ 9.8, i.e. sorted
  // indices 39 and 60 (0-based): (1.60 - 1.39) / 2 over the median 1.495.
  std::vector<double> samples;
  for (int i = 0; i < 100; ++i) samples.push_back(1.0 + 0.01 * i);
  const kbench::Statistics stats = kbench::summarize(samples);
  EXPECT_NEAR(stats.noise, (1.60 - 1.39) / 2 / 1.495, 1e-12);
  // Identical samples: no noise; one outlier does not move it.
  std::vector<double> flat(50, 2.0);
  EXPECT_DOUBLE_EQ(kbench::summarize(flat).noise, 0.0);
  flat[7] = 200.0;
  EXPECT_DOUBLE_EQ(kbench::summarize(flat).noise, 0.0);
  // Three samples: the whole range.
  const std::vector<double> three{1.0, 2.0, 4.0};
  EXPECT_DOUBLE_EQ(kbench::summarize(three).noise, (4.0 - 1.0) / 2 / 2.0);
}

TEST(Summarize, NoiseShrinksWithMoreSamples) {
  std::vector<double> samples;
  double previous = 1.0;
  for (int n : {30, 300, 3000}) {
    samples.clear();
    for (int i = 0; i < n; ++i) samples.push_back(1.0 + std::fmod(i * 0.618034, 1.0) * 0.1);  // spread evenly
    const double noise = kbench::summarize(samples).noise;
    EXPECT_LT(noise, previous) << n;
    previous = noise;
  }
}

TEST(GpuConditions, SummaryTakesMediansExtremesAndEveryReason) {
  using kbench::GpuSample;
  const std::vector<GpuSample> samples = {
      {1980, 2619, 300, 40, kbench::kClockLimitIdle},
      {1455, 2619, 690, 55, kbench::kClockLimitPowerCap},
      {1410, 2619, 700, 57, kbench::kClockLimitPowerCap},
      {1500, 2619, 650, 56, 0},
  };
  const kbench::GpuConditions c = kbench::summarize_conditions(samples);
  EXPECT_TRUE(c.available);
  EXPECT_EQ(c.samples, 4);
  EXPECT_DOUBLE_EQ(c.sm_clock_mhz, (1455 + 1500) / 2.0);
  EXPECT_DOUBLE_EQ(c.sm_clock_min_mhz, 1410);
  EXPECT_DOUBLE_EQ(c.power_w, (650 + 690) / 2.0);
  EXPECT_DOUBLE_EQ(c.power_max_w, 700);
  EXPECT_DOUBLE_EQ(c.temperature_c, 57);
  EXPECT_EQ(c.clock_limits, kbench::kClockLimitIdle | kbench::kClockLimitPowerCap);
  EXPECT_EQ(kbench::clock_limit_names(c.clock_limits), "gpu_idle|sw_power_cap");
  EXPECT_EQ(kbench::clock_limit_names(0), "none");
  EXPECT_FALSE(kbench::summarize_conditions({}).available);
}

}  // namespace
