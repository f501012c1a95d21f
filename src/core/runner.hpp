// Runs cases: backends filtered by what the GPU supports, refcheck, timing, [PERF] lines and CSV
// rows. A problem with one case is reported and counted; it never stops a testlist.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <span>
#include <string>

#include "core/case_args.hpp"
#include "core/csv.hpp"
#include "core/device_info.hpp"
#include "core/log.hpp"
#include "core/registry.hpp"
#include "kbench/statistics.hpp"

namespace kbench {

// Exit statuses of the kbench command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCaseFailed = 1;  // a case failed (error, refcheck mismatch)
inline constexpr int kExitUsage = 2;       // the command line, a testlist file or the output path
inline constexpr int kExitNoDevice = 3;    // no CUDA device to run on

enum class CaseStatus { passed, failed, skipped };

struct CaseOutcome {
  CaseStatus status = CaseStatus::passed;
  std::string reason;  // why it failed or was skipped
};

struct RunSummary {
  int run = 0;
  int failed = 0;
  int skipped = 0;
};

class Runner {
 public:
  Runner(const RoutineRegistry& registry, const DeviceInfo& device, std::ostream& out);

  // Runs one case. Never throws for a problem of the case: it returns it.
  [[nodiscard]] CaseOutcome run_case(const CaseArgs& args);

  // Opens (once) the CSV at `path`. Throws UsageError when it cannot be written.
  CsvWriter& csv(const std::string& path);

  void count(const CaseOutcome& outcome);
  [[nodiscard]] const RunSummary& summary() const noexcept { return summary_; }
  [[nodiscard]] const Log& log() const noexcept { return log_; }

 private:
  CaseOutcome run_checked(const CaseArgs& args);
  // The requested (or default) backends that can run this case, the baseline first; warns for
  // each one skipped.
  [[nodiscard]] std::vector<std::string> runnable_backends(const Routine& routine, const Case& problem,
                                                           const CaseArgs& args) const;
  void write_baseline_row(const std::string& path, const Routine& routine, const CaseArgs& args,
                          const std::string& candidate, const Statistics& stats, const Statistics& baseline);
  const RoutineRegistry& registry_;
  DeviceInfo device_;
  Log log_;
  std::vector<std::string> columns_;
  std::map<std::string, std::unique_ptr<CsvWriter>> writers_;
  std::map<std::string, std::unique_ptr<CsvWriter>> baseline_writers_;  // by path and header
  RunSummary summary_;
};

// The whole command: parse, dispatch, run, and return the exit status.
[[nodiscard]] int kbench_main(std::span<const std::string> tokens, const RoutineRegistry& registry, std::ostream& out);

}  // namespace kbench
