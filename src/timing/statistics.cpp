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

  // The median's distribution-free 95% confidence interval: the order statistics at ranks
  // n/2 -+ 1.96 sqrt(n)/2 (binomial(n, 1/2) around the median), which holds for skewed and bimodal
  // times alike. Too few samples for such ranks give the whole range.
  const double half_width_ranks = 1.96 * std::sqrt(static_cast<double>(n)) / 2.0;
  const auto lower = static_cast<std::size_t>(std::max(0.0, std::floor((n - 1) / 2.0 - half_width_ranks)));
  const auto upper = std::min(n - 1, static_cast<std::size_t>(std::ceil((n - 1) / 2.0 + half_width_ranks)));
  const double noise = median > 0 ? (sorted[upper] - sorted[lower]) / 2.0 / median : 0.0;

  return Statistics{
      .median = median,
      .mean = mean,
      .std = std::sqrt(squared_deviations / static_cast<double>(n)),
      .min = sorted.front(),
      .max = sorted.back(),
      .count = n,
      .noise = noise,
  };
}

}  // namespace kbench
