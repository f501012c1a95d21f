// The two-pass plan's sample rank (kernels/sampling/two_pass_sample.hpp) against the promise its
// comment makes: the estimate (the r-th largest of the sample's thread maxima, at most the sample's
// r-th largest) exceeds a row's k-th largest only if r sample elements lie among the row's k - 1
// largest. On a row in random order that count is hypergeometric (the sample is kSampleSize
// distinct positions); its tail at r must stay below 1e-9 wherever the plan takes the row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/sampling/two_pass_sample.hpp"

namespace kbench {
namespace {

namespace ks = kernels::sampling;

double log_choose(double n, double k) { return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1); }

// P(X >= r) for X ~ Hypergeometric(population, successes, draws).
double hypergeometric_tail(int64_t population, int64_t successes, int64_t draws, int64_t r) {
  const double all = log_choose(static_cast<double>(population), static_cast<double>(draws));
  double tail = 0.0;
  for (int64_t x = r; x <= std::min(successes, draws); ++x) {
    tail += std::exp(log_choose(static_cast<double>(successes), static_cast<double>(x)) +
                     log_choose(static_cast<double>(population - successes), static_cast<double>(draws - x)) - all);
  }
  return tail;
}

TEST(TwoPassSample, RankFailsBelowOneInABillionOnRowsInRandomOrder) {
  int checked = 0;
  for (const int64_t k : {1, 2, 8, 50, 100, 256, 300, 500, 512}) {
    for (const int64_t cols : {16381, 32768, 50257, 65536, 100000, 128256, 151936, 200003, 262144, 1048320}) {
      const int64_t rank = ks::sample_rank(k, cols);
      if (k >= cols || rank > ks::kSampleThreads / 2) continue;  // the plan refuses these
      const double tail = hypergeometric_tail(cols, k - 1, ks::kSampleSize, rank);
      EXPECT_LT(tail, 1e-9) << "k " << k << ", cols " << cols << ", rank " << rank;
      ++checked;
    }
  }
  EXPECT_GT(checked, 60);
}

// The numbers the results README quotes for top_k 256 of 262144 and the samplers' k 50 of 128256.
TEST(TwoPassSample, RanksOfTheTargets) {
  EXPECT_EQ(ks::sample_rank(256, 262144), 33);
  EXPECT_EQ(ks::sample_rank(50, 128256), 22);
  EXPECT_EQ(ks::kSampleSize, 8192);
}

}  // namespace
}  // namespace kbench
