// Runs cases: the backends chosen and asked whether they run, the memory plan, then for each
// backend prepare, refcheck and timing, its result handed to the reporters. Every backend of every
// case ends with a disposition; a problem with one backend or case is reported and counted and
// never stops a testlist.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "core/case_args.hpp"
#include "core/device_info.hpp"
#include "core/json_report.hpp"
#include "core/log.hpp"
#include "core/outcome.hpp"
#include "core/registry.hpp"
#include "core/reporter.hpp"

namespace kbench {

// Exit statuses of the kbench command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCaseFailed = 1;  // a case failed (error, refcheck mismatch)
inline constexpr int kExitUsage = 2;       // the command line, a testlist file or the output path
inline constexpr int kExitNoDevice = 3;    // no CUDA device to run on

// A case as the summary names it ("line 3: BatchDecodeWithPagedKVCacheWrapper") and how it ended.
struct CaseRecord {
  std::string where;
  CaseOutcome outcome;
};

class Runner {
 public:
  Runner(const RoutineRegistry& registry, const DeviceInfo& device, std::ostream& out);

  // Runs one case. Never throws for a problem of the case or of a backend: it returns it.
  [[nodiscard]] CaseOutcome run_case(const CaseArgs& args);
  // The same in a child process of its own (--isolate, --case_timeout): a fault, trap, hang or
  // crash fails only this case. The child writes its CSV rows itself; its JSON results are merged.
  [[nodiscard]] CaseOutcome run_case_isolated(const CaseArgs& args);
  // Runs `cases` in child processes, at most one per entry of `gpus` at a time ("" leaves the
  // device as it is; else the child's CUDA_VISIBLE_DEVICES), and hands each outcome to `done` in
  // case order (a null entry is not a case: it is handed over in its turn, with an empty outcome).
  // With `capture`, a child's output is printed when its turn comes, not as it runs.
  void run_in_children(std::span<const CaseArgs* const> cases, const std::vector<std::string>& gpus, bool capture,
                       const std::function<void(std::size_t, CaseOutcome)>& done);

  // Counts an outcome for the summary, under `where`, and adds it to the --json document of `args`
  // (the case's, or the testlist command's for a line that never became a case).
  void record(std::string where, CaseOutcome outcome, const CaseArgs& args);
  // The end-of-run summary: cases, then every backend of every case with its disposition.
  void print_summary(bool testlist) const;
  [[nodiscard]] int failed_cases() const;
  [[nodiscard]] const Log& log() const noexcept { return log_; }

 private:
  struct Selected {
    std::string requested;  // as the user wrote it
    std::string label;      // [PERF] name
    const Backend* backend;
    std::size_t slot;       // its place in CaseOutcome::backends (the order requested)
  };
  CaseOutcome run_checked(const CaseArgs& args);
  // --per_stage_timing: each of the operation's stages timed alone, as the whole call was.
  [[nodiscard]] std::vector<StageTime> time_stages(Operation& operation, const std::string& label,
                                                   const TimingOptions& timing) const;
  // The requested (or default) backends that run this case, the baseline first. Every requested
  // backend gets its place in outcome.backends, in the order requested: the ones skipped are warned
  // about and recorded as not supported there.
  [[nodiscard]] std::vector<Selected> select_backends(const Routine& routine, const Case& problem,
                                                      const CaseArgs& args, CaseOutcome& outcome) const;

  const RoutineRegistry& registry_;
  DeviceInfo device_;
  Log log_;
  ConsoleReporter console_;
  CsvReporter csv_;
  BaselineCsvReporter baseline_csv_;
  JsonReporter json_;
  std::ostream& out_;
  std::vector<CaseRecord> records_;
};

// The whole command: parse, dispatch, run, and return the exit status.
[[nodiscard]] int kbench_main(std::span<const std::string> tokens, const RoutineRegistry& registry, std::ostream& out);

}  // namespace kbench
