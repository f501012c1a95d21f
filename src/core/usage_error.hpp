// Errors in what the user asked for (unknown flag, bad value, unreadable file). The command line
// reports them with exit status 2; inside a testlist they fail that line and the run goes on.
#pragma once

#include <stdexcept>
#include <string>

namespace kbench {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A case of a routine the reference tool has and kbench has not built yet: skipped with a
// warning ("kbench has no <routine> yet"), counted as skipped, never as a failure.
class RoutineNotBuilt : public std::runtime_error {
 public:
  explicit RoutineNotBuilt(const std::string& routine)
      : std::runtime_error("kbench has no " + routine + " yet"), routine_(routine) {}
  [[nodiscard]] const std::string& routine() const noexcept { return routine_; }

 private:
  std::string routine_;
};

}  // namespace kbench
