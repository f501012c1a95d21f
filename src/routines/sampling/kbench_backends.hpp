// The sampling family's own backends: `cuda`, kbench's row kernels, and `cub`, the sort-based
// baseline (kernels/sampling).
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_sampling_cuda_backend();
[[nodiscard]] std::unique_ptr<Backend> make_sampling_cub_backend();

}  // namespace kbench
