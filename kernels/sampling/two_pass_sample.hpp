// The sample of the two-pass plan's estimate (row_kernels.cuh describes the plan), shared by the
// kernel, the plan and the CPU test of the rank's failure probability.
#pragma once

#include <cmath>
#include <cstdint>

namespace kbench::kernels::sampling {

// kSampleSegments evenly spaced runs of kSegmentThreads * kSamplePerThread contiguous elements,
// one run per kSegmentThreads of the estimate's kSampleThreads threads.
inline constexpr int kSampleThreads = 512;
inline constexpr int kSampleSegments = 32;
inline constexpr int kSegmentThreads = kSampleThreads / kSampleSegments;
inline constexpr int kSamplePerThread = 16;
inline constexpr int kSampleSize = kSampleThreads * kSamplePerThread;

// The rank r of the row's threshold among the sample's thread maxima: k's expected share of the
// sample plus 6 standard deviations and 8. The threshold exceeds the row's k-th largest only if r
// sample elements lie among the row's k - 1 largest (tests/cpu/sampling: below 1e-9 on rows in
// random order).
inline int64_t sample_rank(int64_t k, int64_t cols) {
  const double share = static_cast<double>(k) * kSampleSize / static_cast<double>(cols);
  return static_cast<int64_t>(std::ceil(share + 6.0 * std::sqrt(share) + 8.0));
}

}  // namespace kbench::kernels::sampling
