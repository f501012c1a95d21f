// The RMSNorm family: rmsnorm, fused_add_rmsnorm, gemma_rmsnorm, rmsnorm_quant and
// fused_add_rmsnorm_quant, all on kbench's own `cuda` kernels.
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_norm_routines(RoutineRegistry& registry);

}  // namespace kbench
