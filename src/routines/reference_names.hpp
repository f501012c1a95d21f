// The names FlashInfer's flashinfer_benchmark.py accepts (its README's routines and the newer ones
// at its HEAD, every backend name of its routines: ../shared/spec), so that a testlist written for
// it runs unchanged: a routine kbench has not built is skipped with a warning, a backend kbench
// lacks is skipped with the reference's warning, and only names neither knows are errors.
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_reference_names(RoutineRegistry& registry);

}  // namespace kbench
