// The attention family: BatchDecodeWithPagedKVCacheWrapper (fa2, fa2_tc, cudnn, auto),
// BatchPrefillWithRaggedKVCacheWrapper and BatchPrefillWithPagedKVCacheWrapper (fa2, fa3, cudnn,
// cudnn-native, auto).
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_attention_routines(RoutineRegistry& registry);

}  // namespace kbench
