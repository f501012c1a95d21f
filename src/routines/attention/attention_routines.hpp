// The attention family: BatchDecodeWithPagedKVCacheWrapper (fa2, fa2_tc, cudnn, auto).
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_attention_routines(RoutineRegistry& registry);

}  // namespace kbench
