#include "core/runner.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

#include "core/cli.hpp"
#include "core/routine.hpp"
#include "core/shell_words.hpp"
#include "core/testlist.hpp"
#include "core/usage_error.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/timing.hpp"

namespace kbench {
namespace {

// Calls per captured graph, as the reference uses.
constexpr int kCallsPerGraph = 10;

std::string number(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

std::string gib(std::size_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buffer;
}

std::string python_bool(bool b) { return b ? "True" : "False"; }

std::string join(const std::vector<int64_t>& values, const char* open, const char* close) {
  std::string s = open;
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  // A 1-tuple is written "(n,)" as Python does.
  if (values.size() == 1 && std::string_view(open) == "(") s += ",";
  return s + close;
}

nlohmann::ordered_json args_json(const CaseArgs& args) {
  nlohmann::ordered_json j;
  for (const FlagSpec& spec : args.flags()) {
    if (!args.has(spec.name)) {
      j[spec.name] = nullptr;
      continue;
    }
    switch (spec.kind) {
      case FlagKind::integer: j[spec.name] = args.integer(spec.name); break;
      case FlagKind::real: j[spec.name] = args.real(spec.name); break;
      case FlagKind::boolean: j[spec.name] = args.flag(spec.name); break;
      case FlagKind::count: j[spec.name] = args.count(spec.name); break;
      case FlagKind::text_list: j[spec.name] = args.list(spec.name); break;
      case FlagKind::text: j[spec.name] = args.text(spec.name); break;
    }
  }
  return j;
}

std::string unsupported_warning(std::string_view backend, std::string_view routine, const DeviceInfo& device,
                                std::string_view reason) {
  return std::string(backend) + " for routine " + std::string(routine) + " is not supported on compute capability " +
         device.compute_capability() + " (" + std::string(reason) + "). Skipping.";
}

void print_backend_matrix(const RoutineRegistry& registry, const std::optional<DeviceInfo>& device,
                          const std::string& why_no_device, std::ostream& out) {
  if (device) {
    out << "kbench " << KBENCH_VERSION << " on " << device->name << " (compute capability "
        << device->compute_capability() << ", " << device->sm_count << " SMs, " << device->l2_bytes / (1024 * 1024)
        << " MiB L2)\n";
  } else {
    out << "kbench " << KBENCH_VERSION << ": no CUDA device present (" << why_no_device
        << "); every backend needs one.\n";
  }
  std::size_t width = std::string_view("routine").size();
  for (const auto& routine : registry.all()) width = std::max(width, routine->name().size());
  std::string header = "routine";
  header.resize(width + 2, ' ');
  out << header << "backend        status\n";
  for (const auto& routine : registry.all()) {
    for (const auto& backend : routine->backends()) {
      std::string name(routine->name());
      name.resize(width + 2, ' ');
      std::string b = backend;
      b.resize(std::max<std::size_t>(b.size() + 1, 15), ' ');
      std::string status = "skipped: no CUDA device";
      if (device) {
        const BackendSupport support = routine->support(backend, *device);
        status = support.supported ? "runs" : "skipped: " + support.reason;
      }
      out << name << b << status << "\n";
    }
  }
}

}  // namespace

Runner::Runner(const RoutineRegistry& registry, const DeviceInfo& device, std::ostream& out)
    : registry_(registry), device_(device), log_(out), columns_(csv_columns(registry)) {}

CsvWriter& Runner::csv(const std::string& path) {
  auto it = writers_.find(path);
  if (it == writers_.end()) {
    auto writer = std::make_unique<CsvWriter>(path, columns_);
    if (writer->header_mismatch()) {
      log_.warning("existing CSV " + path + " has a different header; appending kbench rows anyway");
    }
    it = writers_.emplace(path, std::move(writer)).first;
  }
  return *it->second;
}

void Runner::count(const CaseOutcome& outcome) {
  ++summary_.run;
  if (outcome.status == CaseStatus::failed) ++summary_.failed;
  if (outcome.status == CaseStatus::skipped) ++summary_.skipped;
}

CaseOutcome Runner::run_case(const CaseArgs& args) {
  try {
    return run_checked(args);
  } catch (const UsageError& e) {
    return {CaseStatus::failed, e.what()};
  } catch (const CaseError& e) {
    return {CaseStatus::failed, e.what()};
  } catch (const CudaError& e) {
    // A CUDA error may leave the context unusable: clear what can be cleared and go on.
    (void)cudaGetLastError();
    return {CaseStatus::failed, std::string("CUDA error: ") + e.what()};
  } catch (const std::exception& e) {
    return {CaseStatus::failed, e.what()};
  }
}

std::vector<std::string> Runner::runnable_backends(const Routine& routine, const Case& problem,
                                                   const CaseArgs& args) const {
  std::vector<std::string> backends = args.has("backends") ? args.list("backends") : routine.default_backends();
  const auto implemented = routine.backends();
  std::erase_if(backends, [&](const std::string& b) {
    BackendSupport support{false, "kbench has no " + b + " backend for this routine"};
    if (std::find(implemented.begin(), implemented.end(), b) != implemented.end()) {
      support = routine.support(b, device_);
      if (support.supported) support = problem.support(b);
    }
    if (!support.supported) log_.warning(unsupported_warning(b, routine.name(), device_, support.reason));
    return !support.supported;
  });
  // The baseline runs first, so every other backend's row can carry its speedup.
  if (const auto baseline = args.optional_text("baseline")) {
    const auto it = std::find(backends.begin(), backends.end(), *baseline);
    if (it == backends.end()) {
      log_.warning("--baseline " + *baseline + " is not among the backends that run; no speedups reported");
    } else {
      std::rotate(backends.begin(), it, it + 1);
    }
  }
  return backends;
}

CaseOutcome Runner::run_checked(const CaseArgs& args) {
  const Routine& routine = *registry_.find(args.routine());
  log_.set_verbosity(args.count("verbose"));
  log_.info_v("args = " + args_json(args).dump());
  log_.info_v("Running " + std::string(routine.test_name()));
  log_.info_v(std::string("kbench version: ") + KBENCH_VERSION);
  log_.vverbose("gpu_name = '" + device_.gpu_name() + "'");
  const std::string repro = repro_command(args);
  if (args.flag("generate_repro_command")) {
    log_.info("To reproduce this test case, run the following command: " + repro);
  }
  const auto output_path = args.optional_text("output_path");
  CsvWriter* writer = output_path ? &csv(*output_path) : nullptr;

  std::unique_ptr<Case> problem = routine.make_case(args);
  const std::vector<std::string> backends = runnable_backends(routine, *problem, args);
  if (backends.empty()) {
    log_.error("No backends to test. Exiting.");
    return {CaseStatus::skipped, "no backend of this case runs on this GPU"};
  }

  const bool refcheck = args.flag("refcheck");
  TimingOptions timing;
  timing.dry_run_iters = static_cast<int>(args.integer("dry_run_iters"));
  timing.num_iters = static_cast<int>(args.integer("num_iters"));
  timing.use_cupti = !args.flag("use_cuda_events");
  timing.use_cuda_graph = !args.flag("no_cuda_graph");
  timing.calls_per_graph = kCallsPerGraph;
  timing.cold_l2 = true;

  // Memory: the L2-rotation copies shrink to what fits; one copy must fit.
  const std::size_t per_copy = problem->bytes_per_copy();
  const std::size_t fixed = (refcheck ? problem->reference_bytes() : 0) + 2 * device_.l2_bytes;
  const std::size_t free_bytes = free_device_memory();
  int copies = timing.use_cuda_graph ? cold_l2_copies(per_copy, kCallsPerGraph, device_.l2_bytes) : 1;
  while (copies > 1 && fixed + copies * per_copy > free_bytes) --copies;
  if (fixed + per_copy > free_bytes) {
    throw CaseError("case too large for GPU memory: it needs " + gib(fixed + per_copy) + ", and " + gib(free_bytes) +
                    " of " + gib(device_.total_memory) + " are free");
  }
  timing.num_copies = copies;

  CudaStream stream;
  problem->allocate(copies, static_cast<uint64_t>(args.integer("random_seed")), stream.get());
  stream.synchronize();
  for (const TensorInfo& t : problem->tensors()) {
    log_.vverbose(t.name + ".shape = torch.Size(" + join(t.shape, "[", "]") + ")");
    log_.vverbose(t.name + ".stride() = " + join(t.stride, "(", ")"));
    log_.vverbose(t.name + ".dtype = " + std::string(dtype_torch_name(t.dtype)));
  }
  problem->describe(log_);

  CaseOutcome outcome;
  std::optional<Statistics> baseline;
  for (const std::string& backend : backends) {
    const std::string resolved = problem->resolved_backend(backend);
    const std::string label = backend == "auto" ? "auto(" + resolved + ")" : backend;
    std::string refcheck_status = "not_run";
    try {
      problem->prepare(backend, stream.get());
    } catch (const BackendUnavailable& e) {
      log_.warning(unsupported_warning(backend, routine.name(), device_, e.what()));
      continue;
    }
    if (refcheck) {
      const RefcheckResult result = problem->check(backend, stream.get());
      refcheck_status = result.passed() ? "passed" : "failed";
      for (const Comparison& c : result.comparisons) {
        if (c.mismatches == 0 && c.total > 0) continue;
        char detail[160];
        std::snprintf(detail, sizeof detail, " (%.2f%%) elements differ; max abs error %.4g (rtol %g, atol %g)",
                      c.mismatch_percent(), c.max_abs_error, c.tolerance.rtol, c.tolerance.atol);
        log_.error("Output tensor mismatch from backend " + label + " (" + c.tensor + "): " +
                   std::to_string(c.mismatches) + "/" + std::to_string(c.total) + detail);
      }
      if (!result.passed() && !args.flag("allow_output_mismatch")) {
        outcome = {CaseStatus::failed, "backend " + label + " failed the refcheck"};
      }
    }

    const TimingResult timed = time_gpu(
        [&](cudaStream_t s, int copy) { problem->launch(backend, s, copy); }, timing);
    for (const std::string& w : timed.warnings) log_.warning(w);
    const Statistics& stats = timed.stats;
    const double tflops = problem->flops() / (1e9 * stats.median);
    const double tb_per_sec = problem->bytes() / (1e9 * stats.median);
    log_.perf(label, stats.median, stats.std, tflops, tb_per_sec);

    const bool is_baseline = args.has("baseline") && backend == args.text("baseline");
    std::string speedup;
    if (is_baseline) {
      baseline = stats;
    } else if (baseline) {
      speedup = number(baseline->median / stats.median);
      char line[200];
      std::snprintf(line, sizeof line, "%s speedup over %s: %.3fx (median %.4f ms vs %.4f ms)", label.c_str(),
                    args.text("baseline").c_str(), baseline->median / stats.median, stats.median, baseline->median);
      log_.info(line);
      if (const auto path = args.optional_text("baseline_csv")) {
        write_baseline_row(*path, routine, args, backend, stats, *baseline);
      }
    }

    if (writer != nullptr) {
      CsvRow row;
      for (const FlagSpec& spec : routine.flags()) row[spec.name] = args.display(spec.name);
      for (const char* shared : {"refcheck", "no_cuda_graph", "allow_output_mismatch", "random_seed", "case_tag",
                                 "generate_repro_command", "enable_pdl", "baseline"}) {
        row[shared] = args.display(shared);
      }
      row["routine"] = args.routine();
      row["median_time"] = number(stats.median);
      row["std_time"] = number(stats.std);
      row["tflops"] = number(tflops);
      row["tb_per_sec"] = number(tb_per_sec);
      row["backend"] = backend;
      row["resolved_backend"] = resolved;
      row["use_cupti"] = python_bool(timed.timer == Timer::cupti);  // what ran, not what was asked
      row["repro_command"] = args.flag("generate_repro_command") ? repro : "";
      row["timer"] = std::string(timer_name(timed.timer));
      row["calls_per_graph"] = std::to_string(timed.calls_per_graph);
      row["min_time"] = number(stats.min);
      row["max_time"] = number(stats.max);
      row["num_samples"] = std::to_string(stats.count);
      row["gpu_name"] = device_.gpu_name();
      row["refcheck_status"] = refcheck_status;
      row["speedup_over_baseline"] = speedup;
      for (const auto& [column, value] : problem->result_columns()) row[column] = value;
      writer->write_row(row);
    }
  }
  return outcome;
}

void Runner::write_baseline_row(const std::string& path, const Routine& routine, const CaseArgs& args,
                                const std::string& candidate, const Statistics& stats, const Statistics& baseline) {
  const auto config = routine.baseline_report(args);
  if (config.empty()) throw CaseError("--baseline_csv: routine " + args.routine() + " has no baseline report");
  // The vLLM decode sweep's columns: batch_size, <candidate>_mean/_std, baseline_mean/_std,
  // speedup_percent = (baseline - candidate) / baseline (a fraction, as that script writes it).
  std::vector<std::string> columns = {"batch_size", candidate + "_mean", candidate + "_std", "baseline_mean",
                                      "baseline_std", "speedup_percent"};
  CsvRow row = {{"batch_size", args.display("batch_size")},
                {candidate + "_mean", number(stats.mean)},
                {candidate + "_std", number(stats.std)},
                {"baseline_mean", number(baseline.mean)},
                {"baseline_std", number(baseline.std)},
                {"speedup_percent", number((baseline.mean - stats.mean) / baseline.mean)}};
  for (const auto& [column, value] : config) {
    columns.push_back(column);
    row[column] = value;
  }
  const std::string key = path + "\n" + csv_line(columns);
  auto it = baseline_writers_.find(key);
  if (it == baseline_writers_.end()) {
    auto w = std::make_unique<CsvWriter>(path, columns);
    if (w->header_mismatch()) log_.warning("existing CSV " + path + " has a different header; appending anyway");
    it = baseline_writers_.emplace(key, std::move(w)).first;
  }
  it->second->write_row(row);
}

int kbench_main(std::span<const std::string> tokens, const RoutineRegistry& registry, std::ostream& out) {
  const Log log(out);
  Invocation invocation;
  try {
    invocation = parse_invocation(tokens, registry);
  } catch (const UsageError& e) {
    log.error(e.what());
    return kExitUsage;
  }
  if (invocation.command == Command::help) {
    out << invocation.help_text << std::flush;
    return kExitOk;
  }
  std::string why_no_device;
  const std::optional<DeviceInfo> device = query_device(&why_no_device);
  if (invocation.command == Command::list) {
    print_backend_matrix(registry, device, why_no_device, out);
    return kExitOk;
  }

  std::vector<TestlistLine> lines;
  const CaseArgs& args = invocation.args;
  try {
    if (invocation.command == Command::run_testlist) lines = read_testlist(args.text("testlist"));
    // An unwritable output path is found before any case runs.
    if (const auto path = args.optional_text("output_path")) CsvWriter probe(*path, csv_columns(registry));
  } catch (const UsageError& e) {
    log.error(e.what());
    return kExitUsage;
  }
  if (!device) {
    log.error("No CUDA device is present (" + why_no_device +
              "). kbench needs an NVIDIA GPU to run cases; --help and --list work without one.");
    return kExitNoDevice;
  }

  Runner runner(registry, *device, out);
  if (invocation.command == Command::run_case) {
    for (const CaseArgs& one : expand_sweep(args)) {
      const CaseOutcome outcome = runner.run_case(one);
      runner.count(outcome);
      if (outcome.status == CaseStatus::failed) log.error(outcome.reason);
    }
  } else {
    for (const TestlistLine& line : lines) {
      std::vector<CaseArgs> cases;
      try {
        const std::vector<std::string> words = split_shell_words(line.text);
        cases = expand_sweep(apply_outer_flags(parse_case(words, registry), args));
      } catch (const UsageError& e) {
        runner.count({CaseStatus::failed, e.what()});
        log.error("Error running test: " + line.text);
        log.error("line " + std::to_string(line.number) + ": " + e.what());
        continue;
      }
      for (const CaseArgs& one : cases) {
        const CaseOutcome outcome = runner.run_case(one);
        runner.count(outcome);
        if (outcome.status == CaseStatus::failed) {
          log.error("Error running test: " + line.text);
          log.error("line " + std::to_string(line.number) + ": " + outcome.reason);
        }
      }
    }
    const RunSummary& s = runner.summary();
    log.info("Testlist summary: " + std::to_string(s.run) + " cases run, " + std::to_string(s.failed) + " failed, " +
             std::to_string(s.skipped) + " skipped");
  }
  return runner.summary().failed > 0 ? kExitCaseFailed : kExitOk;
}

}  // namespace kbench
