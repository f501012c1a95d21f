#include "routines/builtin_routines.hpp"

#include "routines/attention/attention_routines.hpp"
#include "routines/gemm/gemm_routines.hpp"
#include "routines/moe/moe_routines.hpp"
#include "routines/moe_comm/moe_comm_routines.hpp"
#include "routines/norm/norm_routines.hpp"
#include "routines/quantization/quant_routines.hpp"
#include "routines/reference_names.hpp"
#include "routines/rope/rope_routines.hpp"
#include "routines/sampling/sampling_routines.hpp"

namespace kbench {

RoutineRegistry make_builtin_registry() {
  RoutineRegistry registry;
  register_attention_routines(registry);
  register_norm_routines(registry);
  register_sampling_routines(registry);
  register_quant_routines(registry);
  register_rope_routines(registry);
  register_gemm_routines(registry);
  register_moe_routines(registry);
  register_moe_comm_routines(registry);
  register_reference_names(registry);
  return registry;
}

}  // namespace kbench
