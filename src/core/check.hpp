// kbench --check: every case of a command line or testlist parsed, its sweep expanded, built
// (every value validated, sizes checked) and its memory compared with a stated GPU memory, and its
// backends looked up by name, with no GPU and no CUDA driver. Nothing runs. The lines say what a
// real run would do: run (which backends kbench has), skip (and why), or fail (and why).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/case_args.hpp"
#include "core/registry.hpp"
#include "core/testlist.hpp"

namespace kbench {

// Checks `lines` (a testlist's, or one line holding a command) with the outer flags `outer`;
// returns 0 when no case would fail, 2 otherwise (kExitOk / kExitUsage).
[[nodiscard]] int check_cases(const std::vector<TestlistLine>& lines, const CaseArgs& outer,
                              const RoutineRegistry& registry, std::ostream& out);

// The backends a case asks for: --backends, or the routine's defaults.
[[nodiscard]] std::vector<std::string> requested_backends(const Routine& routine, const CaseArgs& args);

// Whether `args` names (or defaults to) at least one backend its routine has; a case naming only
// backends kbench lacks is skipped before it is built.
[[nodiscard]] bool names_a_kbench_backend(const Routine& routine, const CaseArgs& args);

}  // namespace kbench
