// A case built from a testlist line as kbench builds it (parse, then the routine's make_case), and
// the CaseError a bad line gives: shared by the families' CPU tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/cli.hpp"
#include "core/registry.hpp"
#include "core/routine.hpp"
#include "core/shell_words.hpp"

namespace kbench::testing {

inline std::unique_ptr<Case> case_from_line(const RoutineRegistry& registry, const std::string& line) {
  const CaseArgs args = parse_case(split_shell_words(line), registry);
  return registry.find(args.routine())->make_case(args);
}

// The message of the CaseError the line's case gives; a test failure where the case is accepted.
inline std::string case_error_of(const RoutineRegistry& registry, const std::string& line) {
  try {
    (void)case_from_line(registry, line);
  } catch (const CaseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << line;
  return {};
}

}  // namespace kbench::testing
