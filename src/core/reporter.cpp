#include "core/reporter.hpp"

#include <charconv>
#include <cstdio>

namespace kbench {
namespace {

std::string number(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

std::string python_bool(bool b) { return b ? "True" : "False"; }

}  // namespace

std::string clock_warning(const std::string& label, const GpuConditions& c) {
  if (!c.available || c.sm_clock_max_mhz <= 0) return {};
  // A cap NVML names for one sample of a run at full clock held nothing back: only a clock that ran
  // measurably below its maximum is worth a warning.
  const std::uint64_t caps = c.clock_limits & kClockLimitsThatSlow;
  const bool slow = c.sm_clock_mhz < kSlowClockFraction * c.sm_clock_max_mhz;
  const bool held = caps != 0 && c.sm_clock_mhz < kHeldClockFraction * c.sm_clock_max_mhz;
  if (!slow && !held) return {};
  char line[400];
  std::snprintf(line, sizeof line,
                "%s: the SM clock ran at %.0f MHz (median; %.0f%% of its %.0f MHz maximum, lowest %.0f MHz) at %.0f W "
                "of a %.0f W limit; held by: %s. A compute-bound time here is the clock's as much as the kernel's.",
                label.c_str(), c.sm_clock_mhz, 100 * c.sm_clock_mhz / c.sm_clock_max_mhz, c.sm_clock_max_mhz,
                c.sm_clock_min_mhz, c.power_w, c.power_limit_w,
                caps ? clock_limit_names(caps).c_str() : "no cap NVML names");
  return line;
}

namespace {

}  // namespace

void ConsoleReporter::report(const BackendResult& r) {
  const Statistics& stats = r.timed.stats;
  log_.perf(r.label, stats.median, stats.std, r.tflops, r.tb_per_sec);
  if (r.args.has("max_noise")) {
    char line[240];
    std::snprintf(line, sizeof line, "%s: the median's noise is %.2f%% after %zu iterations", r.label.c_str(),
                  100 * stats.noise, stats.count);
    if (r.timed.noise_reached) {
      log_.info(std::string(line) + " (--max_noise " + r.args.display("max_noise") + ")");
    } else {
      log_.warning(std::string(line) + ", above --max_noise " + r.args.display("max_noise") + " when --max_time " +
                   r.args.display("max_time") + " s ran out");
    }
  }
  if (const std::string warning = clock_warning(r.label, r.timed.conditions); !warning.empty()) log_.warning(warning);
  for (const StageTime& stage : r.stages) {
    char line[240];
    std::snprintf(line, sizeof line, "%s stage %s: median %.4f ms (%.1f%% of the call), std %.4f ms", r.label.c_str(),
                  stage.name.c_str(), stage.stats.median, 100 * stage.stats.median / stats.median, stage.stats.std);
    log_.info(line);
  }
  if (!r.stages.empty()) {
    double sum = 0;
    for (const StageTime& stage : r.stages) sum += stage.stats.median;
    char line[240];
    std::snprintf(line, sizeof line,
                  "%s stages: %.4f ms together, %.3fx the whole call's %.4f ms (each stage alone starts with a cold L2)",
                  r.label.c_str(), sum, sum / stats.median, stats.median);
    log_.info(line);
  }
  if (r.baseline) {
    char line[200];
    std::snprintf(line, sizeof line, "%s speedup over %s: %.3fx (median %.4f ms vs %.4f ms)", r.label.c_str(),
                  r.args.text("baseline").c_str(), r.baseline->median / stats.median, stats.median,
                  r.baseline->median);
    log_.info(line);
  }
}

CsvReporter::CsvReporter(const RoutineRegistry& registry, const DeviceInfo& device)
    : device_(device), columns_(csv_columns(registry)) {}

CsvWriter& CsvReporter::writer(const std::string& path) {
  auto it = writers_.find(path);
  if (it == writers_.end()) {
    it = writers_.emplace(path, std::make_unique<CsvWriter>(path, columns_)).first;
  }
  return *it->second;
}

CsvRow result_row(const BackendResult& r, const DeviceInfo& device) {
  const Statistics& stats = r.timed.stats;
  CsvRow row;
  for (const FlagSpec& spec : r.routine.flags()) row[r.routine.csv_column(spec)] = r.args.display(spec.name);
  for (const char* shared : {"refcheck", "no_cuda_graph", "allow_output_mismatch", "random_seed", "case_tag",
                             "generate_repro_command", "enable_pdl", "baseline"}) {
    row[shared] = r.args.display(shared);
  }
  row["routine"] = r.args.routine();
  row["median_time"] = number(stats.median);
  row["std_time"] = number(stats.std);
  row["tflops"] = number(r.tflops);
  row["tb_per_sec"] = number(r.tb_per_sec);
  row["backend"] = r.backend;
  row["resolved_backend"] = r.resolved;
  row["autotuned"] = python_bool(false);  // kbench never tunes inside a run (--autotune is ignored)
  row["use_cupti"] = python_bool(r.timed.timer == Timer::cupti);  // what ran, not what was asked
  row["repro_command"] = r.args.flag("generate_repro_command") ? r.repro : "";
  row["timer"] = std::string(timer_name(r.timed.timer));
  row["calls_per_graph"] = std::to_string(r.timed.calls_per_graph);
  row["min_time"] = number(stats.min);
  row["max_time"] = number(stats.max);
  row["num_samples"] = std::to_string(stats.count);
  row["noise"] = number(stats.noise);
  row["gpu_name"] = device.gpu_name();
  row["refcheck_status"] = r.refcheck_status;
  row["speedup_over_baseline"] = r.baseline ? number(r.baseline->median / stats.median) : "";
  if (const GpuConditions& c = r.timed.conditions; c.available) {
    row["sm_clock_mhz"] = number(c.sm_clock_mhz);
    row["sm_clock_min_mhz"] = number(c.sm_clock_min_mhz);
    row["sm_clock_max_mhz"] = number(c.sm_clock_max_mhz);
    row["memory_clock_mhz"] = number(c.memory_clock_mhz);
    row["power_w"] = number(c.power_w);
    row["power_max_w"] = number(c.power_max_w);
    row["power_limit_w"] = number(c.power_limit_w);
    row["temperature_c"] = number(c.temperature_c);
    row["throttle_reasons"] = clock_limit_names(c.clock_limits);
  }
  std::string stage_times;  // name:median_ms;...
  for (const StageTime& stage : r.stages) {
    stage_times += (stage_times.empty() ? "" : ";") + stage.name + ":" + number(stage.stats.median);
  }
  row["stage_times"] = stage_times;
  for (const auto& [column, value] : r.problem.result_columns()) row[column] = value;
  return row;
}

void CsvReporter::report(const BackendResult& r) {
  const auto path = r.args.optional_text("output_path");
  if (!path) return;
  writer(*path).write_row(result_row(r, device_));
}

void BaselineCsvReporter::report(const BackendResult& r) {
  const auto path = r.args.optional_text("baseline_csv");
  if (!path || !r.baseline) return;
  const auto config = r.routine.baseline_report(r.args);
  if (config.empty()) throw CaseError("--baseline_csv: routine " + r.args.routine() + " has no baseline report");
  const Statistics& stats = r.timed.stats;
  const Statistics& baseline = *r.baseline;
  // The vLLM decode sweep's columns: batch_size, <candidate>_mean/_std, baseline_mean/_std,
  // speedup_percent = (baseline - candidate) / baseline (a fraction, as that script writes it).
  std::vector<std::string> columns = {"batch_size", r.backend + "_mean", r.backend + "_std", "baseline_mean",
                                      "baseline_std", "speedup_percent"};
  CsvRow row = {{"batch_size", r.args.display("batch_size")},
                {r.backend + "_mean", number(stats.mean)},
                {r.backend + "_std", number(stats.std)},
                {"baseline_mean", number(baseline.mean)},
                {"baseline_std", number(baseline.std)},
                {"speedup_percent", number((baseline.mean - stats.mean) / baseline.mean)}};
  for (const auto& [column, value] : config) {
    columns.push_back(column);
    row[column] = value;
  }
  const std::string key = *path + "\n" + csv_line(columns);
  auto it = writers_.find(key);
  if (it == writers_.end()) {
    it = writers_.emplace(key, std::make_unique<CsvWriter>(*path, columns, "--baseline_csv")).first;
  }
  it->second->write_row(row);
}

}  // namespace kbench
