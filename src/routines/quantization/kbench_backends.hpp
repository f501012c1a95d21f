// The quantization family's own backend: `cuda`, kbench's block quantization kernels
// (kernels/quantization).
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_quant_cuda_backend();

}  // namespace kbench
