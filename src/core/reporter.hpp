// Where a measured backend's result goes. The runner measures; reporters present: the console's
// [PERF] line, the results CSV, the vLLM decode sweep's CSV (--baseline_csv). A new output format
// (JSON, ...) is one more Reporter.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/case_args.hpp"
#include "core/csv.hpp"
#include "core/device_info.hpp"
#include "core/log.hpp"
#include "core/routine.hpp"
#include "kbench/statistics.hpp"
#include "kbench/timing.hpp"

namespace kbench {

// One stage of a call timed on its own (--per_stage_timing).
struct StageTime {
  std::string name;
  Statistics stats;
};

// One backend of one case, measured.
struct BackendResult {
  const CaseArgs& args;
  const Routine& routine;
  const Case& problem;
  std::string backend;          // as requested: "auto", "cudnn-native", "fa3"
  std::string resolved;         // the backend that ran
  std::string label;            // the [PERF] name: "auto(fa3)"
  const TimingResult& timed;
  double tflops = 0;
  double tb_per_sec = 0;
  std::string refcheck_status;  // passed, failed, not_run
  std::string repro;            // the repro command (written where --generate_repro_command)
  std::optional<Statistics> baseline;  // the --baseline backend's times, for every other backend
  std::vector<StageTime> stages = {};  // --per_stage_timing: each stage's times, in the call's order
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void report(const BackendResult& result) = 0;
};

// [PERF] lines, and the speedup over the baseline.
class ConsoleReporter final : public Reporter {
 public:
  explicit ConsoleReporter(const Log& log) : log_(log) {}
  void report(const BackendResult& result) override;

 private:
  const Log& log_;
};

// A measured backend's row: every column the CSV (and the JSON's "results") has a value for.
[[nodiscard]] CsvRow result_row(const BackendResult& result, const DeviceInfo& device);

// A result is warned about (the [WARNING] names the caps NVML reported) when its median SM clock ran
// below kSlowClockFraction of the maximum, or below kHeldClockFraction under a power or thermal cap.
inline constexpr double kSlowClockFraction = 0.9;
inline constexpr double kHeldClockFraction = 0.98;
// The warning for a measurement's conditions, or empty where the clock was not held down.
[[nodiscard]] std::string clock_warning(const std::string& label, const GpuConditions& conditions);

// One row per backend in the case's --output_path (the reference's columns, then kbench's).
class CsvReporter final : public Reporter {
 public:
  CsvReporter(const RoutineRegistry& registry, const DeviceInfo& device);
  void report(const BackendResult& result) override;
  // Opens (once) the CSV at `path`. Throws UsageError when it cannot be written.
  CsvWriter& writer(const std::string& path);

 private:
  DeviceInfo device_;
  std::vector<std::string> columns_;
  std::map<std::string, std::unique_ptr<CsvWriter>> writers_;
};

// --baseline_csv: the vLLM decode sweep's CSV (seed 003), one row per candidate backend.
class BaselineCsvReporter final : public Reporter {
 public:
  void report(const BackendResult& result) override;

 private:
  std::map<std::string, std::unique_ptr<CsvWriter>> writers_;  // by path and header
};

}  // namespace kbench
