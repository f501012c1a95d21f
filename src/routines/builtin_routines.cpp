#include "routines/builtin_routines.hpp"

#include "routines/attention/attention_routines.hpp"
#include "routines/norm/norm_routines.hpp"

namespace kbench {

RoutineRegistry make_builtin_registry() {
  RoutineRegistry registry;
  register_attention_routines(registry);
  register_norm_routines(registry);
  // Backends the reference tool runs that kbench has not (yet): skipped with a reason, not refused.
  registry.add_foreign_backend_names({"cutlass", "trtllm", "trtllm-gen", "trtllm-native", "cublas", "cute-dsl"});
  return registry;
}

}  // namespace kbench
