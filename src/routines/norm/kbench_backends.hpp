// The norm family's own backend: `cuda`, kbench's RMSNorm kernels (kernels/norm).
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_norm_cuda_backend();

}  // namespace kbench
