// How many input/output sets a case gets: as many as keep every call of a CUDA graph on a cold
// L2 (timing.hpp's cold_l2_copies), fewer where device memory is short, and at least one.
#pragma once

#include <string>

#include "core/device_info.hpp"
#include "core/routine.hpp"

namespace kbench {

// "1.50 GiB".
[[nodiscard]] std::string gib_text(double bytes);

// Throws CaseError when even one set does not fit beside the reference and the L2 flush buffer.
[[nodiscard]] int plan_copies(const Case& problem, const DeviceInfo& device, bool refcheck, bool use_cuda_graph,
                              int calls_per_graph);

}  // namespace kbench
