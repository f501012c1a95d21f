#include "core/memory_plan.hpp"

#include <cstdio>

#include "kbench/timing.hpp"

namespace kbench {
std::string gib_text(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buffer;
}

int plan_copies(const Case& problem, const DeviceInfo& device, bool refcheck, bool use_cuda_graph,
                int calls_per_graph) {
  const std::size_t per_copy = problem.bytes_per_copy();
  const std::size_t fixed = (refcheck ? problem.reference_bytes() : 0) + 2 * device.l2_bytes;
  const std::size_t free_bytes = free_device_memory();
  int copies = use_cuda_graph ? cold_l2_copies(per_copy, calls_per_graph, device.l2_bytes) : 1;
  while (copies > 1 && fixed + copies * per_copy > free_bytes) --copies;
  if (fixed + per_copy > free_bytes) {
    throw CaseError("case too large for GPU memory: it needs " + gib_text(static_cast<double>(fixed + per_copy)) +
                    ", and " + gib_text(static_cast<double>(free_bytes)) + " of " +
                    gib_text(static_cast<double>(device.total_memory)) + " are free");
  }
  return copies;
}

}  // namespace kbench
