// The table of routines kbench knows. Families add theirs explicitly (no static-initialisation
// tricks): see src/routines/builtin_routines.cpp.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/routine.hpp"

namespace kbench {

class RoutineRegistry {
 public:
  void add(std::unique_ptr<Routine> routine);
  [[nodiscard]] const Routine* find(std::string_view name) const;
  [[nodiscard]] const std::vector<std::unique_ptr<Routine>>& all() const noexcept { return routines_; }

 private:
  std::vector<std::unique_ptr<Routine>> routines_;
};

}  // namespace kbench
