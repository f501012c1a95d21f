#include "core/routine.hpp"

#include <algorithm>

namespace kbench {

const Backend* Routine::find_backend(std::string_view name) const {
  for (const auto& backend : backends_) {
    if (backend->name() == name) return backend.get();
    const auto& aliases = backend->info().aliases;
    if (std::any_of(aliases.begin(), aliases.end(), [&](const BackendAlias& a) { return a.name == name; })) {
      return backend.get();
    }
  }
  return nullptr;
}

void Routine::add_backend(std::unique_ptr<Backend> backend) {
  if (backend->name() == "auto" || find_backend(backend->name()) != nullptr) {
    throw std::logic_error("routine " + std::string(name()) + ": backend name " + std::string(backend->name()) +
                           " taken twice");
  }
  backends_.push_back(std::move(backend));
}

}  // namespace kbench
