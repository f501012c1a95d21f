// The MoE routines: trtllm_fp8_block_scale_moe (DeepSeek FP8 block scales).
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_moe_routines(RoutineRegistry& registry);

}  // namespace kbench
