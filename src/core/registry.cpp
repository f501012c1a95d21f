#include "core/registry.hpp"

#include <algorithm>
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

void RoutineRegistry::add_foreign_backend_names(std::vector<std::string> names) {
  foreign_backend_names_.insert(foreign_backend_names_.end(), names.begin(), names.end());
}

void RoutineRegistry::add_foreign_routine_names(std::vector<std::string> names) {
  for (auto& name : names) {
    if (find(name) == nullptr && !is_foreign_routine(name)) foreign_routines_.push_back(std::move(name));
  }
}

bool RoutineRegistry::is_foreign_routine(std::string_view name) const {
  return std::find(foreign_routines_.begin(), foreign_routines_.end(), name) != foreign_routines_.end();
}

std::vector<std::string> RoutineRegistry::accepted_backend_names() const {
  std::vector<std::string> names;
  auto add = [&](std::string_view name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
  };
  for (const auto& routine : routines_) {
    for (const auto& backend : routine->backends()) {
      add(backend->name());
      for (const BackendAlias& alias : backend->info().aliases) add(alias.name);
    }
    if (routine->has_auto()) add("auto");
  }
  for (const auto& name : foreign_backend_names_) add(name);
  return names;
}

}  // namespace kbench
