// The MoE communication routines: moe_a2a_dispatch_combine (expert-parallel all-to-all).
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_moe_comm_routines(RoutineRegistry& registry);

}  // namespace kbench
