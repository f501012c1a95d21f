// `moe_a2a` (the reference's name): kbench's NVLink kernels for moe_a2a_dispatch_combine.
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_a2a_kernels_backend();

}  // namespace kbench
