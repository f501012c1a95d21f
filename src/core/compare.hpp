// kbench compare BASE NEW: two result files (kbench's CSV or JSON) case by case, with a verdict per
// (case, backend) whose threshold comes from the noise each run recorded, and an exit status a CI
// job can gate on.
//
// Case identity. Rows match when routine, backend and every configuration column agree. A
// configuration column is any column (CSV) or scalar key (JSON) except
//   - the measurements: median_time, std_time, min_time, max_time, num_samples, noise, tflops,
//     tb_per_sec, resolved_backend, avg_actual_seq_len (drawn from the seed), refcheck_status,
//     speedup_over_baseline, samples_ms, disposition, reason, mean_time, noise_reached, autotuned;
//   - the GPU's conditions: temperature_c, throttle_reasons, conditions_unavailable, and any column
//     whose name holds "clock" or "power";
//   - the run's records and reporting switches: repro_command, gpu_name, timer, calls_per_graph,
//     use_cupti (what timed the row), output_path, baseline_csv, baseline, case_tag, refcheck,
//     allow_output_mismatch, generate_repro_command, json, json_samples, verbose.
// Empty values are left out, so a column one file lacks matches an empty one in the other. Values
// are compared in one canonical text: numbers by value ("16", 16 and 16.0 agree), JSON booleans as
// True/False (the CSV's spelling). When a file holds a case twice, its last row counts.
//
// Noise. Each row's median gets a relative standard error u:
//   - the row's `noise` value (relative noise of the median, a fraction) when recorded;
//   - else 1.2533 * sigma / sqrt(num_samples) / median (the standard error of a median of normal
//     samples), sigma being std_time, or (max_time - min_time) / 4 where std_time is missing (the
//     range of the 20-50 samples of a run spans about four standard deviations);
//   - else unknown (fewer than two samples, or nothing recorded).
//
// Verdict, with change = new / base - 1 and the threshold max(k * sqrt(u_base^2 + u_new^2),
// min_change) (k = --threshold_sigma, default 3; --min_change default 1%):
//   NOISY when either u is unknown or above --max_noise (default 5%): no verdict can be trusted;
//   SAME  when |change| <= threshold (within noise, or significant but too small to matter);
//   SLOW  when change > threshold; FAST when change < -threshold.
// A note names what else changed between the runs: the timer, and an SM clock that differed by more
// than kClockNoteFraction (under a power cap the clock, not the kernel, may explain a SLOW).
// A case measured in only one file is ADDED (NEW only) or REMOVED (BASE only, or not measured in
// NEW: a JSON row with no median, e.g. a backend that failed).
//
// Exit status: 0 no regression; 1 a SLOW verdict (--fail_on slow, the default) or any verdict but
// SAME (--fail_on any: FAST, NOISY, ADDED and REMOVED too); 2 a usage error (bad option,
// unreadable file, not a kbench result file).
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kbench {

inline constexpr int kExitRegression = 1;  // kbench compare: a verdict --fail_on names
inline constexpr double kClockNoteFraction = 0.02;

// One row of a result file, as compare sees it.
struct Measurement {
  std::string routine;
  std::string backend;
  std::vector<std::pair<std::string, std::string>> configuration;  // non-empty, canonical, by name
  std::string case_tag;
  std::string timer;
  std::optional<double> sm_clock_mhz;    // the median SM clock while it was measured, where recorded
  std::optional<double> median_ms;       // none: the row was not measured
  std::optional<double> relative_error;  // u above; none: unknown
  std::string not_measured_reason;       // disposition and reason of a row without a median
};

struct ResultFile {
  std::string path;
  std::string gpu_name;  // the first row's, for a warning when the two files differ
  std::vector<Measurement> rows;
};

// Reads a kbench CSV or JSON result file (told apart by its first character). Throws UsageError
// when the file cannot be read or is not a kbench result file.
[[nodiscard]] ResultFile read_result_file(const std::string& path);

// The columns named above that are never part of a case's identity (scripts/plot_report.py keeps
// the same list; a CPU test checks).
[[nodiscard]] const std::set<std::string, std::less<>>& run_record_columns();
// Whether a column takes part in a case's identity (the rule above).
[[nodiscard]] bool is_configuration_column(std::string_view column);

enum class FailOn { slow, any };

struct CompareOptions {
  double threshold_sigma = 3.0;
  double min_change = 0.01;  // fractions; the command line takes percent
  double max_noise = 0.05;
  FailOn fail_on = FailOn::slow;
};

enum class Verdict { fast, slow, same, noisy, added, removed };
[[nodiscard]] std::string_view verdict_name(Verdict v);

struct CaseComparison {
  const Measurement* base = nullptr;  // null for ADDED
  const Measurement* next = nullptr;  // null for REMOVED
  Verdict verdict = Verdict::same;
  double change = 0.0;     // new / base - 1 (matched rows)
  double threshold = 0.0;  // the |change| SAME allows (matched rows whose noise is trusted)
  std::string note;        // why NOISY or REMOVED; a timer that differs
};

// Every case of either file: BASE's order, then what only NEW has, in NEW's order.
[[nodiscard]] std::vector<CaseComparison> compare_results(const ResultFile& base, const ResultFile& next,
                                                      const CompareOptions& options);

// 0, or kExitRegression when a comparison has a verdict `fail_on` names.
[[nodiscard]] int compare_exit_status(const std::vector<CaseComparison>& comparisons, FailOn fail_on);

// `kbench compare BASE NEW [options]`: `arguments` are those after "compare". Prints the table and
// the summary (or the help, or one [ERROR] line) to `out` and returns the exit status.
[[nodiscard]] int compare_main(std::span<const std::string> arguments, std::ostream& out);

}  // namespace kbench
