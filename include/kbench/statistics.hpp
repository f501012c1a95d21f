// Summary statistics of per-iteration times, as the reference reports them: median and population
// standard deviation (numpy's np.median / np.std), plus the mean, min, max and the median's noise.
#pragma once

#include <cstddef>
#include <span>

namespace kbench {

struct Statistics {
  double median = 0;
  double mean = 0;
  double std = 0;  // population standard deviation (divide by n)
  double min = 0;
  double max = 0;
  std::size_t count = 0;
  // The median's relative uncertainty: half the width of its distribution-free 95% confidence
  // interval over the median (0.004 = 0.4 %). What --max_noise bounds and `kbench compare` weighs.
  double noise = 0;
};

// Throws std::invalid_argument on an empty sample.
[[nodiscard]] Statistics summarize(std::span<const double> samples);

}  // namespace kbench
