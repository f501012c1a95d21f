// The GEMM routines: bmm_fp8, gemm_fp8_nt_groupwise, group_gemm_fp8_nt_groupwise, mm_fp4, mm_fp8,
// mm_bf16, bmm_bf16.
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_gemm_routines(RoutineRegistry& registry);

}  // namespace kbench
