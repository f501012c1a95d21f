// The kbench command line: FlashInfer's flashinfer_benchmark.py command lines, verbatim.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/case_args.hpp"
#include "core/registry.hpp"

namespace kbench {

enum class Command {
  run_case,      // --routine X [flags]
  run_testlist,  // --testlist FILE [shared flags that apply to every line]
  list,          // --list: the routine x backend matrix (for the GPU present, or as markdown)
  help,          // --help, or --routine X --help
};

enum class ListFormat { text, markdown };

struct Invocation {
  Command command = Command::help;
  ListFormat list_format = ListFormat::text;
  CaseArgs args;          // run_case: the case; run_testlist: the outer shared flags
  std::string help_text;  // help
};

// Parses a whole command line (without the program name). Throws UsageError.
[[nodiscard]] Invocation parse_invocation(std::span<const std::string> tokens, const RoutineRegistry& registry);

// Parses one case (a command line or a testlist line) that names its routine. Throws UsageError.
[[nodiscard]] CaseArgs parse_case(std::span<const std::string> tokens, const RoutineRegistry& registry);

// The most cases one command line or testlist line may sweep over.
inline constexpr std::size_t kMaxSweepCases = 100000;

// How many cases a sweep makes (the product of the numeric flags' value counts); throws UsageError
// beyond kMaxSweepCases.
[[nodiscard]] std::size_t sweep_size(const CaseArgs& args);

// The cases of a sweep: one CaseArgs for every combination of the values of multi-valued numeric
// flags (earlier flags vary slowest); a case without such flags is its own single case.
[[nodiscard]] std::vector<CaseArgs> expand_sweep(const CaseArgs& args);

// A testlist line's case with the outer command line's flags applied: the outer --output_path
// replaces the line's, and outer switches (--refcheck, -v, --generate_repro_command, ...) add to it.
[[nodiscard]] CaseArgs apply_outer_flags(CaseArgs line_case, const CaseArgs& outer);

[[nodiscard]] std::string top_level_help(const RoutineRegistry& registry);
[[nodiscard]] std::string routine_help(const Routine& routine);

// --shard I/N: the I-th (from 0) of N slices, as {I, N}. Throws UsageError.
[[nodiscard]] std::pair<std::size_t, std::size_t> parse_shard(const std::string& text);
// The cases [first, last) of a run of `total` that shard {index, count} runs: contiguous slices, so
// the N shards' CSVs concatenate in the run's order, sizes differing by at most one.
[[nodiscard]] std::pair<std::size_t, std::size_t> shard_range(std::size_t total, std::pair<std::size_t, std::size_t> shard);
// --gpus I,J,...: distinct GPU indices. Throws UsageError.
[[nodiscard]] std::vector<int> parse_gpu_list(const std::string& text);

// The shell-quoted command line that reproduces a case: "kbench --routine X" and every flag the
// user gave, in a canonical order. parse_case() of it gives back an equal CaseArgs.
[[nodiscard]] std::string repro_command(const CaseArgs& args);
// The same command's words after "kbench".
[[nodiscard]] std::vector<std::string> case_words(const CaseArgs& args);

}  // namespace kbench
