// Every routine family kbench ships, registered in one place.
#pragma once

#include "core/registry.hpp"

namespace kbench {

[[nodiscard]] RoutineRegistry make_builtin_registry();

}  // namespace kbench
