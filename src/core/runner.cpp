#include "core/runner.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include "core/check.hpp"
#include "core/json_report.hpp"
#include "core/child_process.hpp"
#include "core/cli.hpp"
#include "core/memory_plan.hpp"
#include "core/rank_group.hpp"
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

// Set in a child process of --isolate: where it writes its cases' outcomes for the parent.
constexpr const char* kCaseReportVariable = "KBENCH_CASE_REPORT";

std::optional<std::string> case_report_path() {
  const char* path = std::getenv(kCaseReportVariable);
  return path != nullptr && *path != '\0' ? std::optional<std::string>(path) : std::nullopt;
}

// --gpus all|I,J,...: the CUDA_VISIBLE_DEVICES value of each worker, as this process sees the GPUs
// (under a CUDA_VISIBLE_DEVICES of its own, index i is the i-th entry of it).
std::vector<std::string> visible_gpus(const std::string& spec) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  std::vector<std::string> ids;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr && *visible != '\0') {
    std::stringstream list(visible);
    for (std::string id; std::getline(list, id, ',');) ids.push_back(id);
    ids.resize(std::min(ids.size(), static_cast<std::size_t>(count)));
  } else {
    for (int i = 0; i < count; ++i) ids.push_back(std::to_string(i));
  }
  if (spec == "all") return ids;
  std::vector<std::string> chosen;
  for (const int index : parse_gpu_list(spec)) {
    if (index >= static_cast<int>(ids.size())) {
      throw UsageError("--gpus: GPU " + std::to_string(index) + " does not exist (" + std::to_string(ids.size()) +
                       " visible)");
    }
    chosen.push_back(ids[static_cast<std::size_t>(index)]);
  }
  return chosen;
}

void write_case_report(const std::string& path, const std::vector<CaseOutcome>& outcomes) {
  std::ofstream out(path, std::ios::trunc);
  for (const CaseOutcome& outcome : outcomes) out << case_outcome_json(outcome) << '\n';
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

Runner::Runner(const RoutineRegistry& registry, const DeviceInfo& device, std::ostream& out)
    : registry_(registry), device_(device), log_(out), console_(log_), csv_(registry, device), json_(device), out_(out) {}

CaseOutcome Runner::run_case_isolated(const CaseArgs& args) {
  CaseOutcome result;
  const CaseArgs* only[] = {&args};
  run_in_children(only, {""}, false, [&](std::size_t, CaseOutcome outcome) { result = std::move(outcome); });
  return result;
}

namespace {

// A case's child process and the files it hands back: its outcome, its CSV rows, its JSON results
// and (captured) its output, under one temporary stem.
struct ChildCase {
  std::string stem;
  std::optional<ChildProcess> process;
  std::optional<ChildExit> exit;
  std::optional<double> timeout;

  [[nodiscard]] std::string path(const char* suffix) const { return stem + suffix; }
};

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

// The child is this executable given the case's own command line; it reports its outcome through a
// file, and writes its CSV rows and JSON results to files of its own that the parent appends to the
// real ones in case order (so rows already written survive the child's death, and several children
// never write one file at once).
void Runner::run_in_children(std::span<const CaseArgs* const> cases, const std::vector<std::string>& gpus, bool capture,
                             const std::function<void(std::size_t, CaseOutcome)>& done) {
  static std::atomic<int> serial{0};
  std::vector<ChildCase> children(cases.size());
  std::vector<std::size_t> gpu_of(cases.size());
  std::vector<bool> gpu_busy(gpus.size(), false);
  std::size_t next_to_start = 0, next_to_finish = 0;

  const auto start = [&](std::size_t i, std::size_t gpu) {
    const CaseArgs& args = *cases[i];
    ChildCase& child = children[i];
    child.stem = (std::filesystem::temp_directory_path() /
                  ("kbench_case_" + std::to_string(::getpid()) + "_" + std::to_string(serial++)))
                     .string();
    CaseArgs child_args = args;
    for (const char* flag : {"isolate", "case_timeout", "gpus", "shard"}) child_args.unset(flag);
    if (args.has("output_path")) child_args.set("output_path", {child.path(".csv")}, true);
    if (args.has("json")) child_args.set("json", {child.path(".json")}, true);
    child.timeout = args.has("case_timeout") ? std::optional<double>(args.real("case_timeout")) : std::nullopt;
    std::vector<std::pair<std::string, std::string>> environment = {{kCaseReportVariable, child.path(".outcome")}};
    if (!gpus[gpu].empty()) environment.emplace_back("CUDA_VISIBLE_DEVICES", gpus[gpu]);
    out_.flush();  // an uncaptured child writes to the same stream: keep the order
    try {
      child.process.emplace(ChildSpec{self_executable(), case_words(child_args), std::move(environment),
                                      capture ? std::optional(child.path(".log")) : std::nullopt, child.timeout});
      gpu_of[i] = gpu;
      gpu_busy[gpu] = true;
    } catch (const std::exception& e) {
      child.exit = ChildExit{ChildExit::How::exited, -1};
      out_ << "[ERROR] " << e.what() << '\n';
    }
  };

  const auto finish = [&](std::size_t i) {
    ChildCase& child = children[i];
    if (capture) out_ << read_whole(child.path(".log")) << std::flush;
    const CaseArgs& args = *cases[i];
    CaseOutcome outcome;
    bool reported = false;
    if (std::ifstream in(child.path(".outcome")); in) {
      std::string line;
      while (std::getline(in, line)) {
        try {
          outcome = parse_case_outcome(line);
          reported = true;
        } catch (const std::exception&) {
          break;  // a line cut short by the child's death
        }
      }
    }
    if (const auto path = args.optional_text("output_path")) {
      std::ifstream in(child.path(".csv"));
      std::string header_line, line;
      if (std::getline(in, header_line)) {
        const std::vector<std::string> header = parse_csv_line(header_line);
        while (std::getline(in, line)) {
          const std::vector<std::string> fields = parse_csv_line(line);
          if (fields.size() != header.size()) break;  // a row cut short by the child's death
          CsvRow row;
          for (std::size_t c = 0; c < header.size(); ++c) row[header[c]] = fields[c];
          csv_.writer(*path).write_row(row);
        }
      }
    }
    if (const auto path = args.optional_text("json")) {
      try {
        json_.add_results(*path, nlohmann::ordered_json::parse(read_whole(child.path(".json"))).at("results"));
      } catch (const std::exception&) {
        // No document: the child died before its first case ended.
      }
    }
    for (const char* suffix : {".outcome", ".csv", ".json", ".json.tmp", ".log"}) {
      std::filesystem::remove(child.path(suffix));
    }
    const ChildExit exit = *child.exit;
    if (!reported || exit.how != ChildExit::How::exited) {
      outcome.status = CaseStatus::failed;
      outcome.reason = "the case's process ended with " + exit.describe(child.timeout) +
                       (reported ? " after reporting its outcome" : " before reporting its outcome") + " (--isolate)";
    }
    done(i, std::move(outcome));
  };

  auto pause = std::chrono::microseconds(200);
  while (next_to_finish < cases.size()) {
    bool progressed = false;
    // Lines that are no case pass straight through, in their turn.
    while (next_to_start < cases.size() && cases[next_to_start] == nullptr) ++next_to_start;
    for (std::size_t gpu = 0; gpu < gpus.size() && next_to_start < cases.size(); ++gpu) {
      if (gpu_busy[gpu]) continue;
      start(next_to_start++, gpu);
      while (next_to_start < cases.size() && cases[next_to_start] == nullptr) ++next_to_start;
      progressed = true;
    }
    for (std::size_t i = next_to_finish; i < next_to_start; ++i) {
      ChildCase& child = children[i];
      if (cases[i] == nullptr || child.exit || !child.process) continue;
      if (const auto exit = child.process->poll()) {
        child.exit = exit;
        gpu_busy[gpu_of[i]] = false;
        progressed = true;
      }
    }
    // In order: an entry that is no case is ready as soon as everything before it is.
    while (next_to_finish < cases.size() &&
           (cases[next_to_finish] == nullptr || children[next_to_finish].exit.has_value())) {
      if (cases[next_to_finish] == nullptr) {
        done(next_to_finish, {});
      } else {
        finish(next_to_finish);
      }
      ++next_to_finish;
      progressed = true;
    }
    if (progressed) {
      pause = std::chrono::microseconds(200);
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(20000));
    }
  }
}

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

namespace {

// time_gpu, and in a multi-process run (one rank per GPU) the reference's cross-rank rule: each
// iteration's time is the maximum over the ranks, then the statistics. Every rank runs the same
// fixed number of iterations (the runner turns noise-aware stopping off there).
TimingResult time_on_every_rank(const LaunchFn& launch, const TimingOptions& timing) {
  TimingResult timed = time_gpu(launch, timing);
  if (RankGroup* group = rank_group(); group != nullptr && group->size() > 1) {
    timed.samples_ms = group->max_over_ranks(timed.samples_ms);
    timed.stats = summarize(timed.samples_ms);
  }
  return timed;
}

}  // namespace

std::vector<StageTime> Runner::time_stages(Operation& operation, const std::string& label,
                                           const TimingOptions& timing) const {
  // The whole call has run on every input set (warm-up and measurement), so each stage finds what
  // the stages before it wrote for the set it is given.
  std::vector<StageTime> times;
  const std::vector<OperationStage> stages = operation.stages();
  if (stages.empty()) log_.warning(label + " runs as one piece: --per_stage_timing has no stages to time");
  for (const OperationStage& stage : stages) {
    const TimingResult timed = time_on_every_rank(stage.launch, timing);
    for (const std::string& w : timed.warnings) log_.warning(label + " stage " + stage.name + ": " + w);
    times.push_back({stage.name, timed.stats});
  }
  return times;
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
  if (args.has("max_noise")) timing.max_noise = args.real("max_noise") / 100;
  if (RankGroup* group = rank_group(); group != nullptr && group->size() > 1 && timing.max_noise > 0) {
    log_.warning("--max_noise is ignored in a run of " + std::to_string(group->size()) +
                 " ranks: every rank must run the same iterations (--num_iters)");
    timing.max_noise = 0;
  }
  timing.min_time_s = args.real("min_time");
  timing.timeout_s = args.real("max_time");

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
        RefcheckResult checked = verifier.check(*operation, stream.get());
        // In a multi-process run every rank checks its own outputs; the verdict is all of theirs.
        RankGroup* group = rank_group();
        const bool passed = group != nullptr && group->size() > 1 ? group->all(checked.passed()) : checked.passed();
        if (passed != checked.passed()) {
          Comparison elsewhere;
          elsewhere.tensor = "another rank's outputs";
          elsewhere.total = 1;
          elsewhere.mismatches = 1;
          elsewhere.rule = "its refcheck failed (that rank's [ERROR] lines say how)";
          checked.comparisons.push_back(std::move(elsewhere));
        }
        refcheck_status = passed ? "passed" : "failed";
        result.disposition = passed ? Disposition::passed : Disposition::incorrect;
        for (const Comparison& c : checked.comparisons) {
          if (c.mismatches == 0 && c.total > 0) continue;
          char head[160];
          std::string detail;
          if (c.rule.empty()) {
            std::snprintf(head, sizeof head, " (%.2f%%) elements differ; max abs error %.4g (rtol %g, atol %g)",
                          c.mismatch_percent(), c.max_abs_error, c.tolerance.rtol, c.tolerance.atol);
            detail = head;
          } else {
            // The rule whole (a fixed buffer cut the longer ones), and the largest error where the rule
            // also compares values within a tolerance.
            std::snprintf(head, sizeof head, " (%.2f%%) elements differ: ", c.mismatch_percent());
            detail = head + c.rule;
            if (c.tolerance.rtol > 0 || c.tolerance.atol > 0) {
              std::snprintf(head, sizeof head, "; max abs error %.4g", c.max_abs_error);
              detail += head;
            }
          }
          const std::string message = "Output tensor mismatch from backend " + s.label + " (" + c.tensor + "): " +
                                      std::to_string(c.mismatches) + "/" + std::to_string(c.total) + detail;
          log_.error(message);
          if (result.reason.empty()) result.reason = message;
        }
      }
      const TimingResult timed =
          time_on_every_rank([&](cudaStream_t st, int copy) { operation->launch(st, copy); }, timing);
      for (const std::string& w : timed.warnings) log_.warning(w);
      std::vector<StageTime> stages;
      // moe_a2a_dispatch_combine's --per_phase_timing is the reference's name for it.
      if (args.flag("per_stage_timing") || (args.has("per_phase_timing") && args.flag("per_phase_timing"))) {
        stages = time_stages(*operation, s.label, timing);
      }
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
                                   is_baseline ? std::nullopt : baseline,
                                   std::move(stages)};
      if (is_baseline) baseline = timed.stats;
      for (Reporter* reporter : std::initializer_list<Reporter*>{&console_, &csv_, &baseline_csv_, &json_}) {
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

void Runner::record(std::string where, CaseOutcome outcome, const CaseArgs& args) {
  json_.record_case(where, args, outcome);
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
    const auto failed = failed_cases();
    log.info("Testlist summary: " + std::to_string(records_.size()) + " cases: " +
             std::to_string(static_cast<long>(records_.size()) - failed - skipped) + " passed, " + std::to_string(failed) +
             " failed, " + std::to_string(skipped) + " skipped");
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

  // The run, in order: every case of the command or testlist, and every testlist line that could
  // not become one (reported in its turn). --shard takes a contiguous slice of it.
  struct Job {
    std::string where;  // the summary's name: "line 3 rmsnorm", "rmsnorm"
    std::string line;   // "line 3" (empty for a command)
    std::string text;   // the testlist line
    std::optional<CaseArgs> args;
    CaseOutcome not_a_case;  // a line that is none: skipped (routine not built) or failed (bad line)
  };
  std::vector<Job> jobs;
  if (invocation.command == Command::run_case) {
    for (CaseArgs& one : expand_sweep(args)) jobs.push_back({one.routine(), "", "", std::move(one), {}});
  } else {
    for (const TestlistLine& line : lines) {
      const std::string where = "line " + std::to_string(line.number);
      try {
        const CaseArgs line_case = parse_case(split_shell_words(line.text), registry);
        for (const char* whole_run : {"gpus", "shard", "nproc"}) {
          if (line_case.given(whole_run)) {
            throw UsageError(std::string("--") + whole_run + " applies to a whole run: give it on the command line");
          }
        }
        for (CaseArgs& one : expand_sweep(apply_outer_flags(line_case, args))) {
          jobs.push_back({where + " " + one.routine(), where, line.text, std::move(one), {}});
        }
      } catch (const RoutineNotBuilt& e) {
        jobs.push_back({where + " " + e.routine(), where, line.text, std::nullopt, {CaseStatus::skipped, e.what(), {}}});
      } catch (const UsageError& e) {
        jobs.push_back({where, where, line.text, std::nullopt, {CaseStatus::failed, e.what(), {}}});
      }
    }
  }
  std::vector<std::string> gpus;
  try {
    if (args.has("gpus")) gpus = visible_gpus(args.text("gpus"));
  } catch (const UsageError& e) {
    log.error(e.what());
    return kExitUsage;
  }
  if (args.has("shard")) {
    const std::size_t total = jobs.size();
    const auto [first, last] = shard_range(total, parse_shard(args.text("shard")));
    log.info("Shard " + args.text("shard") + ": cases " + std::to_string(first + 1) + " to " + std::to_string(last) +
             " of " + std::to_string(total) + " in this run's order");
    jobs = std::vector<Job>(std::make_move_iterator(jobs.begin() + static_cast<std::ptrdiff_t>(first)),
                            std::make_move_iterator(jobs.begin() + static_cast<std::ptrdiff_t>(last)));
  }

  Runner runner(registry, *device, out);
  // A child of --isolate reports its outcome to its parent, which prints the errors and summary.
  const std::optional<std::string> report = case_report_path();
  std::vector<CaseOutcome> reported;
  const bool testlist = invocation.command == Command::run_testlist;
  const auto finish = [&](Job& job, CaseOutcome outcome) {
    if (!job.args) {
      if (job.not_a_case.status == CaseStatus::skipped) {
        log.warning(job.not_a_case.reason + ". Skipping.");
      } else {
        log.error("Error running test: " + job.text);
        log.error(job.line + ": " + job.not_a_case.reason);
      }
      runner.record(job.where, job.not_a_case, args);
      return;
    }
    if (outcome.status == CaseStatus::failed && !report) {
      if (testlist) log.error("Error running test: " + job.text);
      log.error(testlist ? job.line + ": " + outcome.reason : outcome.reason);
    }
    if (report) reported.push_back(outcome);
    runner.record(job.where, std::move(outcome), *job.args);
  };
  if (!gpus.empty()) {
    std::vector<const CaseArgs*> cases;
    for (const Job& job : jobs) cases.push_back(job.args ? &*job.args : nullptr);
    log.info("Running " + std::to_string(cases.size()) + " cases over " + std::to_string(gpus.size()) +
             " GPUs, one child process per case");
    runner.run_in_children(cases, gpus, true, [&](std::size_t i, CaseOutcome outcome) { finish(jobs[i], std::move(outcome)); });
  } else {
    for (Job& job : jobs) {
      if (!job.args) {
        finish(job, {});
        continue;
      }
      const bool isolate = job.args->flag("isolate") || job.args->has("case_timeout");  // only a process can be killed
      finish(job, isolate ? runner.run_case_isolated(*job.args) : runner.run_case(*job.args));
    }
  }
  if (report) {
    write_case_report(*report, reported);
  } else {
    runner.print_summary(testlist);
  }
  return runner.failed_cases() > 0 ? kExitCaseFailed : kExitOk;
}

}  // namespace kbench
