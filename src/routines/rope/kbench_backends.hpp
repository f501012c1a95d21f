// The RoPE family's own backend: `cuda`, kbench's RoPE kernel (kernels/rope).
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_rope_cuda_backend();

}  // namespace kbench
