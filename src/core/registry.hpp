// The table of routines kbench knows. Families add theirs explicitly (no static-initialisation
// tricks): see src/routines/builtin_routines.cpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/routine.hpp"

namespace kbench {

class RoutineRegistry {
 public:
  void add(std::unique_ptr<Routine> routine);
  [[nodiscard]] const Routine* find(std::string_view name) const;
  [[nodiscard]] const std::vector<std::unique_ptr<Routine>>& all() const noexcept { return routines_; }

  // Backend names the reference tool accepts where kbench has no such backend (they are skipped
  // with a reason, not refused as typos).
  void add_foreign_backend_names(std::vector<std::string> names);
  // Routines the reference tool has and kbench has not built yet: a case of one is skipped with a
  // warning, not refused as a typo.
  void add_foreign_routine_names(std::vector<std::string> names);
  [[nodiscard]] bool is_foreign_routine(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& foreign_routine_names() const noexcept { return foreign_routines_; }
  // What --backends accepts: every routine's backends and their aliases, `auto`, the foreign names.
  [[nodiscard]] std::vector<std::string> accepted_backend_names() const;

 private:
  std::vector<std::unique_ptr<Routine>> routines_;
  std::vector<std::string> foreign_backend_names_;
  std::vector<std::string> foreign_routines_;
};

}  // namespace kbench
