// The routine x backend matrix, from the backend objects: for the GPU present (kbench --list),
// and as the README's markdown table (kbench --list --format markdown), which depends on nothing
// but the source (not the GPU, not the build), so a CPU test can hold the README to it.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "core/device_info.hpp"
#include "core/registry.hpp"

namespace kbench {

void print_support_on_device(const RoutineRegistry& registry, const std::optional<DeviceInfo>& device,
                             const std::string& why_no_device, std::ostream& out);

[[nodiscard]] std::string support_matrix_markdown(const RoutineRegistry& registry);

}  // namespace kbench
