// The block quantization routines: mxfp8_quantize, mxfp4_quantize, nvfp4_quantize,
// nvfp4_batched_quantize.
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_quant_routines(RoutineRegistry& registry);

}  // namespace kbench
