#include "core/registry.hpp"

#include <stdexcept>
#include <string>

namespace kbench {

void RoutineRegistry::add(std::unique_ptr<Routine> routine) {
  if (find(routine->name()) != nullptr) {
    throw std::logic_error("routine registered twice: " + std::string(routine->name()));
  }
  routines_.push_back(std::move(routine));
}

const Routine* RoutineRegistry::find(std::string_view name) const {
  for (const auto& r : routines_) {
    if (r->name() == name) return r.get();
  }
  return nullptr;
}

}  // namespace kbench
