#include "core/runner.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

#include "core/check.hpp"
#include "core/cli.hpp"
#include "core/memory_plan.hpp"
#include "core/routine.hpp"
#include "core/shell_words.hpp"
#include "core/support_matrix.hpp"
#include "core/testlist.hpp"
#include "core/usage_error.hpp"
#include "core/verify.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/timing.hpp"

namespace kbench {
namespace {

// Calls per captured graph, as the reference uses.
constexpr int kCallsPerGraph = 10;

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

std::string no_such_backend(const std::string& name) { return "kbench has no " + name + " backend for this routine"; }

// Whether `backend` runs `problem` on `device`: the GPU and build first, then the problem.
Support ask(const Backend& backend, const Case& problem, const DeviceInfo& device) {
  Support support = backend.can_run_on(device);
  if (support) support = backend.can_implement(problem);
  return support;
}

}  // namespace

std::string_view disposition_name(Disposition d) {
  switch (d) {
    case Disposition::passed: return "passed";
    case Disposition::not_verified: return "ran (no refcheck)";
    case Disposition::incorrect: return "incorrect";
    case Disposition::not_supported: return "not supported";
    case Disposition::failed: return "failed";
  }
  return "?";
}

Runner::Runner(const RoutineRegistry& registry, const DeviceInfo& device, std::ostream& out)
    : registry_(registry), device_(device), log_(out), console_(log_), csv_(registry, device) {}

CaseOutcome Runner::run_case(const CaseArgs& args) {
  try {
    return run_checked(args);
  } catch (const CudaError& e) {
    // A CUDA error may leave the context unusable: clear what can be cleared and go on.
    (void)cudaGetLastError();
    return {CaseStatus::failed, std::string("CUDA error: ") + e.what(), {}};
  } catch (const std::exception& e) {  // UsageError, CaseError, ...
    return {CaseStatus::failed, e.what(), {}};
  }
}

std::vector<Runner::Selected> Runner::select_backends(const Routine& routine, const Case& problem,
                                                      const CaseArgs& args, CaseOutcome& outcome) const {
  const std::vector<std::string> requested = requested_backends(routine, args);
  std::vector<Selected> selected;
  auto skip = [&](const std::string& label, const std::string& reason) {
    log_.warning(unsupported_warning(label, routine.name(), device_, reason));
    outcome.backends.push_back({label, Disposition::not_supported, reason});
  };
  for (const std::string& name : requested) {
    if (name == "auto" && routine.has_auto()) {  // resolved here, once: the first candidate that runs
      const Backend* chosen = nullptr;
      std::string why_none;
      for (const std::string& candidate : routine.auto_candidates(problem)) {
        const Backend* backend = routine.find_backend(candidate);
        if (backend == nullptr) continue;
        const Support support = ask(*backend, problem, device_);
        if (support) {
          chosen = backend;
          break;
        }
        why_none += (why_none.empty() ? "" : "; ") + candidate + ": " + support.reason;
      }
      if (chosen == nullptr) {
        skip(name, "no backend `auto` picks runs here (" + why_none + ")");
      } else {
        const std::string label = "auto(" + std::string(chosen->name()) + ")";
        selected.push_back({name, label, chosen, outcome.backends.size()});
        outcome.backends.push_back({label, Disposition::not_verified, ""});
      }
      continue;
    }
    const Backend* backend = routine.find_backend(name);
    if (backend == nullptr) {
      skip(name, no_such_backend(name));
      continue;
    }
    if (const Support support = ask(*backend, problem, device_); !support) {
      skip(name, support.reason);
      continue;
    }
    for (const BackendAlias& alias : backend->info().aliases) {
      if (alias.name == name) log_.info(alias.note);
    }
    selected.push_back({name, name, backend, outcome.backends.size()});
    outcome.backends.push_back({name, Disposition::not_verified, ""});
  }
  // The baseline runs first, so every other backend's row can carry its speedup.
  if (const auto baseline = args.optional_text("baseline")) {
    const auto it = std::find_if(selected.begin(), selected.end(), [&](const Selected& s) { return s.requested == *baseline; });
    if (it == selected.end()) {
      log_.warning("--baseline " + *baseline + " is not among the backends that run; no speedups reported");
    } else {
      std::rotate(selected.begin(), it, it + 1);
    }
  }
  return selected;
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
  if (const auto path = args.optional_text("output_path")) (void)csv_.writer(*path);
  if (args.flag("autotune") || args.has("autotune_cache")) {
    log_.warning("--autotune and --autotune_cache are accepted and ignored: kbench's backends plan once, outside timing");
  }

  CaseOutcome outcome;
  // A line naming only backends kbench does not have (a Blackwell line: prims-ts, trtllm-native) is
  // skipped before its case is built: its shape may be one only those backends take.
  if (!names_a_kbench_backend(routine, args)) {
    for (const std::string& name : requested_backends(routine, args)) {
      log_.warning(unsupported_warning(name, routine.name(), device_, no_such_backend(name)));
      outcome.backends.push_back({name, Disposition::not_supported, no_such_backend(name)});
    }
    log_.warning("No backends to test. Skipping.");
    outcome.status = CaseStatus::skipped;
    outcome.reason = "kbench has none of this case's backends";
    return outcome;
  }
  std::unique_ptr<Case> problem = routine.make_case(args);
  const std::vector<Selected> backends = select_backends(routine, *problem, args, outcome);
  if (backends.empty()) {
    log_.warning("No backends to test. Skipping.");
    outcome.status = CaseStatus::skipped;
    outcome.reason = "no backend of this case runs on this GPU";
    return outcome;
  }

  const bool refcheck = args.flag("refcheck");
  TimingOptions timing;
  timing.dry_run_iters = static_cast<int>(args.integer("dry_run_iters"));
  timing.num_iters = static_cast<int>(args.integer("num_iters"));
  timing.use_cupti = !args.flag("use_cuda_events");
  timing.use_cuda_graph = !args.flag("no_cuda_graph");
  timing.calls_per_graph = kCallsPerGraph;
  timing.cold_l2 = true;
  timing.num_copies = plan_copies(*problem, device_, refcheck, timing.use_cuda_graph, kCallsPerGraph);

  CudaStream stream;
  problem->allocate(timing.num_copies, static_cast<uint64_t>(args.integer("random_seed")), stream.get());
  stream.synchronize();
  for (const TensorInfo& t : problem->tensors()) {
    log_.vverbose(t.name + ".shape = torch.Size(" + join(t.shape, "[", "]") + ")");
    log_.vverbose(t.name + ".stride() = " + join(t.stride, "(", ")"));
    log_.vverbose(t.name + ".dtype = " + std::string(dtype_torch_name(t.dtype)));
  }
  problem->describe(log_);

  Verifier verifier(*problem);
  std::optional<Statistics> baseline;
  const bool has_baseline = args.has("baseline");
  for (const Selected& s : backends) {
    BackendOutcome& result = outcome.backends[s.slot];
    try {
      std::unique_ptr<Operation> operation;
      try {
        operation = s.backend->prepare(*problem, stream.get());
      } catch (const BackendUnavailable& e) {
        log_.warning(unsupported_warning(s.label, routine.name(), device_, e.what()));
        result = {s.label, Disposition::not_supported, e.what()};
        continue;
      }
      std::string refcheck_status = "not_run";
      if (refcheck) {
        const RefcheckResult checked = verifier.check(*operation, stream.get());
        refcheck_status = checked.passed() ? "passed" : "failed";
        result.disposition = checked.passed() ? Disposition::passed : Disposition::incorrect;
        for (const Comparison& c : checked.comparisons) {
          if (c.mismatches == 0 && c.total > 0) continue;
          char detail[160];
          if (c.rule.empty()) {
            std::snprintf(detail, sizeof detail, " (%.2f%%) elements differ; max abs error %.4g (rtol %g, atol %g)",
                          c.mismatch_percent(), c.max_abs_error, c.tolerance.rtol, c.tolerance.atol);
          } else {
            std::snprintf(detail, sizeof detail, " (%.2f%%) elements differ: %s", c.mismatch_percent(), c.rule.c_str());
          }
          const std::string message = "Output tensor mismatch from backend " + s.label + " (" + c.tensor + "): " +
                                      std::to_string(c.mismatches) + "/" + std::to_string(c.total) + detail;
          log_.error(message);
          if (result.reason.empty()) result.reason = message;
        }
      }
      const TimingResult timed =
          time_gpu([&](cudaStream_t st, int copy) { operation->launch(st, copy); }, timing);
      for (const std::string& w : timed.warnings) log_.warning(w);
      const bool is_baseline = has_baseline && s.requested == args.text("baseline");
      const BackendResult measured{args,
                                   routine,
                                   *problem,
                                   s.requested,
                                   std::string(s.backend->name()),
                                   s.label,
                                   timed,
                                   problem->flops() / (1e9 * timed.stats.median),
                                   problem->bytes() / (1e9 * timed.stats.median),
                                   refcheck_status,
                                   repro,
                                   is_baseline ? std::nullopt : baseline};
      if (is_baseline) baseline = timed.stats;
      for (Reporter* reporter : std::initializer_list<Reporter*>{&console_, &csv_, &baseline_csv_}) {
        reporter->report(measured);
      }
    } catch (const CudaError& e) {
      (void)cudaGetLastError();
      result = {s.label, Disposition::failed, std::string("CUDA error: ") + e.what()};
      log_.error("backend " + s.label + " failed: " + result.reason);
    } catch (const CaseError&) {  // a report the case cannot make (--baseline_csv): the case's fault
      throw;
    } catch (const std::exception& e) {
      result = {s.label, Disposition::failed, e.what()};
      log_.error("backend " + s.label + " failed: " + result.reason);
    }
  }

  const bool allow_mismatch = args.flag("allow_output_mismatch");
  for (const BackendOutcome& b : outcome.backends) {
    const bool fails_case = b.disposition == Disposition::failed ||
                            (b.disposition == Disposition::incorrect && !allow_mismatch);
    if (fails_case && outcome.status != CaseStatus::failed) {
      outcome.status = CaseStatus::failed;
      outcome.reason = b.disposition == Disposition::incorrect ? "backend " + b.label + " failed the refcheck"
                                                               : "backend " + b.label + " failed: " + b.reason;
    }
  }
  return outcome;
}

void Runner::record(std::string where, CaseOutcome outcome) {
  records_.push_back({std::move(where), std::move(outcome)});
}

int Runner::failed_cases() const {
  return static_cast<int>(std::count_if(records_.begin(), records_.end(),
                                        [](const CaseRecord& r) { return r.outcome.status == CaseStatus::failed; }));
}

void Runner::print_summary(bool testlist) const {
  const Log& log = log_;
  const auto skipped = std::count_if(records_.begin(), records_.end(),
                                     [](const CaseRecord& r) { return r.outcome.status == CaseStatus::skipped; });
  if (testlist) {
    log.info("Testlist summary: " + std::to_string(records_.size()) + " cases run, " +
             std::to_string(failed_cases()) + " failed, " + std::to_string(skipped) + " skipped");
  }
  std::vector<int> counts(5, 0);
  for (const CaseRecord& r : records_) {
    for (const BackendOutcome& b : r.outcome.backends) ++counts[static_cast<int>(b.disposition)];
  }
  log.info("Backends: " + std::to_string(counts[0]) + " passed, " + std::to_string(counts[1]) +
           " ran without refcheck, " + std::to_string(counts[2]) + " incorrect, " + std::to_string(counts[3]) +
           " not supported, " + std::to_string(counts[4]) + " failed");
  for (const CaseRecord& r : records_) {
    std::string line = r.where + ":";
    if (r.outcome.backends.empty()) line += " " + r.outcome.reason;
    for (std::size_t i = 0; i < r.outcome.backends.size(); ++i) {
      const BackendOutcome& b = r.outcome.backends[i];
      line += (i ? "; " : " ") + b.label + " " + std::string(disposition_name(b.disposition));
      if (!b.reason.empty() && b.disposition != Disposition::incorrect) line += " (" + b.reason + ")";
    }
    log.info(line);
  }
}

int kbench_main(std::span<const std::string> tokens, const RoutineRegistry& registry, std::ostream& out) {
  const Log log(out);
  Invocation invocation;
  try {
    invocation = parse_invocation(tokens, registry);
  } catch (const RoutineNotBuilt& e) {
    log.warning(std::string(e.what()) + ". Skipping.");
    return kExitOk;
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
    if (invocation.list_format == ListFormat::markdown) {
      out << support_matrix_markdown(registry);
    } else {
      print_support_on_device(registry, device, why_no_device, out);
    }
    return kExitOk;
  }

  std::vector<TestlistLine> lines;
  const CaseArgs& args = invocation.args;
  if (args.flag("check")) {
    try {
      if (invocation.command == Command::run_testlist) {
        lines = read_testlist(args.text("testlist"));
      } else {
        lines = {{0, join_shell_words(tokens)}};
      }
    } catch (const UsageError& e) {
      log.error(e.what());
      return kExitUsage;
    }
    return check_cases(lines, args, registry, out);
  }
  try {
    if (invocation.command == Command::run_case) {
      // Bad values are the command line's fault: exit 2 with the flag named, GPU or not.
      const Routine& routine = *registry.find(args.routine());
      if (names_a_kbench_backend(routine, args)) {
        for (const CaseArgs& one : expand_sweep(args)) (void)routine.make_case(one);
      }
    }
    if (invocation.command == Command::run_testlist) lines = read_testlist(args.text("testlist"));
    // An unwritable output path, or one holding another CSV, is found before any case runs; so is
    // an unwritable --baseline_csv (its columns name the candidate backend, known only per case).
    if (const auto path = args.optional_text("output_path")) CsvWriter probe(*path, csv_columns(registry));
    if (const auto path = args.optional_text("baseline_csv")) {
      if (!std::ofstream(*path, std::ios::app)) {
        throw UsageError("--baseline_csv: cannot write '" + *path + "': " + std::strerror(errno));
      }
    }
  } catch (const UsageError& e) {
    log.error(e.what());
    return kExitUsage;
  } catch (const CaseError& e) {
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
      CaseOutcome outcome = runner.run_case(one);
      if (outcome.status == CaseStatus::failed) log.error(outcome.reason);
      runner.record(one.routine(), std::move(outcome));
    }
    runner.print_summary(false);
  } else {
    for (const TestlistLine& line : lines) {
      const std::string where = "line " + std::to_string(line.number);
      std::vector<CaseArgs> cases;
      try {
        const std::vector<std::string> words = split_shell_words(line.text);
        cases = expand_sweep(apply_outer_flags(parse_case(words, registry), args));
      } catch (const RoutineNotBuilt& e) {
        log.warning(std::string(e.what()) + ". Skipping.");
        runner.record(where + " " + e.routine(), {CaseStatus::skipped, e.what(), {}});
        continue;
      } catch (const UsageError& e) {
        runner.record(where, {CaseStatus::failed, e.what(), {}});
        log.error("Error running test: " + line.text);
        log.error(where + ": " + e.what());
        continue;
      }
      for (const CaseArgs& one : cases) {
        CaseOutcome outcome = runner.run_case(one);
        if (outcome.status == CaseStatus::failed) {
          log.error("Error running test: " + line.text);
          log.error(where + ": " + outcome.reason);
        }
        runner.record(where + " " + one.routine(), std::move(outcome));
      }
    }
    runner.print_summary(true);
  }
  return runner.failed_cases() > 0 ? kExitCaseFailed : kExitOk;
}

}  // namespace kbench
