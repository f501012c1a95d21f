// The RoPE routines: apply_rope, apply_rope_pos_ids, apply_llama31_rope, apply_llama31_rope_pos_ids,
// apply_rope_with_cos_sin_cache, rope_quantize_fp8, mla_rope_quantize_fp8,
// rope_quantize_fp8_append_paged_kv_cache.
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_rope_routines(RoutineRegistry& registry);

}  // namespace kbench
