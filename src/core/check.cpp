#include "core/check.hpp"

#include <algorithm>

#include "core/cli.hpp"
#include "core/log.hpp"
#include "core/memory_plan.hpp"
#include "core/shell_words.hpp"
#include "core/usage_error.hpp"

namespace kbench {
namespace {

// The L2 flush buffer the runner allocates beside every case (2x an H100's 50 MiB L2).
constexpr double kFlushBytes = 2.0 * 50 * 1024 * 1024;

bool is_kbench_backend(const Routine& routine, const std::string& name) {
  return routine.find_backend(name) != nullptr || (name == "auto" && routine.has_auto());
}

}  // namespace

std::vector<std::string> requested_backends(const Routine& routine, const CaseArgs& args) {
  return args.has("backends") ? args.list("backends") : routine.default_backends();
}

bool names_a_kbench_backend(const Routine& routine, const CaseArgs& args) {
  const auto names = requested_backends(routine, args);
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return is_kbench_backend(routine, n); });
}

int check_cases(const std::vector<TestlistLine>& lines, const CaseArgs& outer, const RoutineRegistry& registry,
                std::ostream& out) {
  const Log log(out);
  int will_run = 0, cases = 0, skipped = 0, errors = 0;
  for (const TestlistLine& line : lines) {
    const std::string where = line.number > 0 ? "line " + std::to_string(line.number) : std::string("the command");
    try {
      const CaseArgs args = apply_outer_flags(parse_case(split_shell_words(line.text), registry), outer);
      const Routine& routine = *registry.find(args.routine());
      const auto names = requested_backends(routine, args);
      std::string runs, skips;
      for (const std::string& n : names) {
        std::string& list = is_kbench_backend(routine, n) ? runs : skips;
        list += (list.empty() ? "" : " ") + n;
      }
      if (runs.empty()) {
        log.warning(where + ": " + args.routine() + ": kbench has none of its backends (" + skips + "): skipped");
        ++skipped;
        continue;
      }
      const std::vector<CaseArgs> sweep = expand_sweep(args);
      for (const CaseArgs& one : sweep) {
        const auto problem = routine.make_case(one);
        const double needed = static_cast<double>(problem->bytes_per_copy()) +
                              (one.flag("refcheck") ? static_cast<double>(problem->reference_bytes()) : 0.0) +
                              kFlushBytes;
        if (needed > one.real("gpu_memory_gib") * 1024.0 * 1024.0 * 1024.0) {
          throw CaseError("the case needs " + gib_text(needed) + " of GPU memory, more than --gpu_memory_gib " +
                          one.display("gpu_memory_gib"));
        }
      }
      ++will_run;
      cases += static_cast<int>(sweep.size());
      log.info(where + ": " + args.routine() + ": " + std::to_string(sweep.size()) +
               (sweep.size() == 1 ? " case" : " cases") + " with " + runs +
               (skips.empty() ? std::string() : "; kbench has no " + skips));
    } catch (const RoutineNotBuilt& e) {
      log.warning(where + ": " + e.what() + ": skipped");
      ++skipped;
    } catch (const std::exception& e) {  // UsageError, CaseError
      log.error("Error running test: " + line.text);
      log.error(where + ": " + e.what());
      ++errors;
    }
  }
  log.info("Check: " + std::to_string(lines.size()) + (lines.size() == 1 ? " line: " : " lines: ") + std::to_string(will_run) + " run (" +
           std::to_string(cases) + " cases), " + std::to_string(skipped) + " skipped, " + std::to_string(errors) +
           " with errors");
  return errors == 0 ? 0 : 2;
}

}  // namespace kbench
