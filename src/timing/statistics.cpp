#include "kbench/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace kbench {

Statistics summarize(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");

  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;

  // Two passes, as numpy does: the mean first, then the mean squared deviation from it.
  const double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  double squared_deviations = 0;
  for (const double x : sorted) squared_deviations += (x - mean) * (x - mean);

  return Statistics{
      .median = median,
      .mean = mean,
      .std = std::sqrt(squared_deviations / static_cast<double>(n)),
      .min = sorted.front(),
      .max = sorted.back(),
      .count = n,
  };
}

}  // namespace kbench
