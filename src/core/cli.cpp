#include "core/cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "core/shell_words.hpp"
#include "core/usage_error.hpp"

namespace kbench {
namespace {

std::string dashed(const FlagSpec& spec) { return "--" + spec.name; }

std::vector<FlagSpec> flags_for(const Routine* routine) {
  std::vector<FlagSpec> flags = shared_flags();
  if (routine == nullptr) {
    // The outer flags of a testlist: every shared flag, none required.
    for (auto& f : flags) f.required = false;
    return flags;
  }
  for (FlagSpec f : routine->flags()) flags.push_back(std::move(f));
  return flags;
}

void validate_value(const FlagSpec& spec, const std::string& value) {
  if (spec.kind == FlagKind::integer) {
    int64_t parsed = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (ec != std::errc() || end != value.data() + value.size()) {
      throw UsageError(dashed(spec) + ": '" + value + "' is not an integer");
    }
  } else if (spec.kind == FlagKind::real) {
    char* end = nullptr;
    const double parsed = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(parsed)) {
      throw UsageError(dashed(spec) + ": '" + value + "' is not a finite number");
    }
  }
  if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end()) {
    std::string options;
    for (const auto& c : spec.choices) options += (options.empty() ? "" : ", ") + c;
    throw UsageError(dashed(spec) + ": invalid choice '" + value + "' (choose from " + options + ")");
  }
}

// Rules on shared flags that hold for every routine.
// A whole decimal number in [0, limit], or nothing.
std::optional<std::size_t> whole_number(const std::string& text, std::size_t limit) {
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const auto value = static_cast<std::size_t>(std::stoul(text));
  return value <= limit ? std::optional(value) : std::nullopt;
}

void validate_shared(const CaseArgs& args, const RoutineRegistry& registry) {
  (void)sweep_size(args);  // a sweep over the limit is refused here, before anything is expanded
  // The timing engine counts iterations in an int: larger values must not wrap to a small one.
  constexpr int64_t kMaxIters = std::numeric_limits<int32_t>::max();
  for (const auto& [flag, low] : {std::pair{"num_iters", int64_t{1}}, std::pair{"dry_run_iters", int64_t{0}}}) {
    for (const std::string& value : args.values(flag)) {
      const int64_t n = std::stoll(value);
      if (n < low || n > kMaxIters) {
        throw UsageError(std::string("--") + flag + ": must be in [" + std::to_string(low) + ", " +
                         std::to_string(kMaxIters) + "], got " + value);
      }
    }
  }
  for (const char* flag : {"case_timeout", "max_noise", "max_time"}) {
    for (const std::string& value : args.values(flag)) {
      if (!(std::stod(value) > 0)) throw UsageError(std::string("--") + flag + ": must be positive, got " + value);
    }
  }
  if (args.has("shard")) (void)parse_shard(args.text("shard"));
  if (args.has("gpus")) {
    if (args.text("gpus") != "all") (void)parse_gpu_list(args.text("gpus"));
    if (args.has("baseline_csv")) throw UsageError("--baseline_csv cannot be combined with --gpus");
  }
  for (const std::string& value : args.values("min_time")) {
    if (!(std::stod(value) >= 0)) throw UsageError("--min_time: must not be negative, got " + value);
  }
  if (args.has("baseline_csv")) {
    // The seed's CSV names one candidate in its columns (<candidate>_mean): one per file.
    const auto& backends = args.list("backends");
    const bool one_candidate = args.has("baseline") && backends.size() == 2 &&
                               std::count(backends.begin(), backends.end(), args.text("baseline")) == 1;
    if (!one_candidate && !args.routine().empty()) {
      throw UsageError("--baseline_csv needs --baseline BACKEND and --backends naming it and one other backend");
    }
  }
  const std::vector<std::string> known = registry.accepted_backend_names();
  for (const auto& b : args.list("backends")) {
    if (std::find(known.begin(), known.end(), b) == known.end()) {
      std::string names;
      for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
      throw UsageError("--backends: unknown backend '" + b + "' (known: " + names + ")");
    }
  }
}

bool looks_like_number(const std::string& t) {
  char* end = nullptr;
  (void)std::strtod(t.c_str(), &end);
  return !t.empty() && end == t.c_str() + t.size();
}

// The flag a token names ("--name", "-n", "--name=value"), or null.
const FlagSpec* flag_of(const std::string& token, const std::vector<FlagSpec>& specs) {
  const std::string name = token.substr(0, token.find('='));
  for (const FlagSpec& f : specs) {
    if (name == "--" + f.name || (!f.short_name.empty() && name == "-" + f.short_name)) return &f;
  }
  return nullptr;
}

bool is_flag_token(const std::string& t) { return t.rfind("-", 0) == 0 && !looks_like_number(t); }

// What argparse refuses and CLI11 would take or word obscurely: a switch given a value
// (--refcheck=false), a valued flag given none (--backends at the end or before another flag).
void check_argparse_forms(std::span<const std::string> tokens, const std::vector<FlagSpec>& specs) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (!is_flag_token(t)) continue;
    const FlagSpec* spec = flag_of(t, specs);
    if (spec == nullptr) continue;
    const auto eq = t.find('=');
    if (spec->kind == FlagKind::boolean || spec->kind == FlagKind::count) {
      if (eq != std::string::npos) {
        throw UsageError("argument " + dashed(*spec) + ": ignored explicit argument '" + t.substr(eq + 1) + "'");
      }
    } else if (eq == std::string::npos && (i + 1 == tokens.size() || is_flag_token(tokens[i + 1]))) {
      const bool several = spec->kind != FlagKind::text;
      throw UsageError("argument " + dashed(*spec) + ": expected " + (several ? "at least one argument" : "one argument"));
    }
  }
}

// argparse keeps the last occurrence of a flag given twice; CLI11 would merge multi-value flags'
// occurrences. So every earlier occurrence of a valued flag (with its values) is dropped first.
std::vector<std::string> keep_last_occurrences(std::span<const std::string> tokens, const std::vector<FlagSpec>& specs) {
  const auto spec_of = [&](const std::string& token) { return flag_of(token, specs); };
  // Each token's occurrence: the flag that owns it (or null) and where that occurrence starts.
  std::vector<std::pair<const FlagSpec*, std::size_t>> owner(tokens.size(), {nullptr, 0});
  const FlagSpec* current = nullptr;
  std::size_t start = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (is_flag_token(t)) {
      current = spec_of(t);
      start = i;
      const bool takes_values = current != nullptr && current->kind != FlagKind::boolean && current->kind != FlagKind::count;
      if (!takes_values || t.find('=') != std::string::npos) {
        owner[i] = {current, i};
        current = nullptr;
        continue;
      }
    }
    owner[i] = {current, start};
  }
  std::map<const FlagSpec*, std::size_t> last_start;
  for (const auto& [spec, begin] : owner) {
    if (spec != nullptr && spec->kind != FlagKind::boolean && spec->kind != FlagKind::count) last_start[spec] = begin;
  }
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& [spec, begin] = owner[i];
    const auto it = last_start.find(spec);
    if (spec == nullptr || it == last_start.end() || it->second == begin) kept.push_back(tokens[i]);
  }
  return kept;
}

CaseArgs parse_flags(std::span<const std::string> all_tokens, const std::string& routine, std::vector<FlagSpec> specs,
                     const RoutineRegistry& registry) {
  check_argparse_forms(all_tokens, specs);
  const std::vector<std::string> tokens = keep_last_occurrences(all_tokens, specs);
  CLI::App app{"kbench"};
  app.set_help_flag();  // help is handled before parsing
  app.allow_extras(false);
  std::vector<CLI::Option*> options;
  for (const FlagSpec& spec : specs) {
    const std::string names = (spec.short_name.empty() ? "" : "-" + spec.short_name + ",") + dashed(spec);
    CLI::Option* opt = nullptr;
    switch (spec.kind) {
      case FlagKind::boolean:
      case FlagKind::count: opt = app.add_flag(names); break;
      case FlagKind::integer:
      case FlagKind::real:
      case FlagKind::text_list:
        // Numeric flags take several values (a sweep); so does --backends.
        opt = app.add_option(names)
                  ->expected(1, CLI::detail::expected_max_vector_size)
                  ->allow_extra_args()
                  ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        break;
      default:
        // argparse semantics: a flag given twice keeps its last value.
        opt = app.add_option(names)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
        break;
    }
    options.push_back(opt);
  }
  std::vector<std::string> reversed(tokens.rbegin(), tokens.rend());  // CLI11 parses a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::ExtrasError&) {
    // argparse's message: the arguments in the order given (CLI11's own message lists them reversed).
    std::string listed;
    for (const std::string& extra : app.remaining()) listed += (listed.empty() ? "" : " ") + extra;
    throw UsageError("unrecognized arguments: " + listed +
                     (routine.empty() ? "" : " (kbench --routine " + routine + " --help lists its flags)"));
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }

  CaseArgs args(routine, std::move(specs));
  for (std::size_t i = 0; i < args.flags().size(); ++i) {
    const FlagSpec& spec = args.flags()[i];
    CLI::Option* opt = options[i];
    const bool given = opt->count() > 0;
    if (spec.kind == FlagKind::boolean) {
      args.set(spec.name, {given ? "true" : "false"}, given);
    } else if (spec.kind == FlagKind::count) {
      args.set(spec.name, {std::to_string(opt->count())}, given);
    } else if (given) {
      std::vector<std::string> values = opt->results();
      if (spec.kind == FlagKind::text) values = {values.back()};
      for (const auto& v : values) validate_value(spec, v);
      args.set(spec.name, std::move(values), true);
    } else if (spec.required && spec.name != "routine") {
      throw UsageError((routine.empty() ? std::string("kbench") : routine) + ": missing required flag " + dashed(spec));
    } else if (spec.default_value) {
      args.set(spec.name, {*spec.default_value}, false);
    }
  }
  validate_shared(args, registry);
  return args;
}

bool is_help(const std::string& t) { return t == "-h" || t == "--help"; }

// The value of --routine/-R or --testlist, found before the routine's own flags are known.
std::optional<std::string> prescan(std::span<const std::string> tokens, std::string_view long_name,
                                   std::string_view short_name) {
  std::optional<std::string> value;  // the last occurrence wins, as with argparse
  const std::string prefix = std::string(long_name) + "=";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t == long_name || (!short_name.empty() && t == short_name)) {
      if (i + 1 >= tokens.size()) throw UsageError(std::string(long_name) + " expects a value");
      value = tokens[++i];
    } else if (t.rfind(prefix, 0) == 0) {
      value = t.substr(prefix.size());
    }
  }
  return value;
}

std::string kind_word(FlagKind kind) {
  switch (kind) {
    case FlagKind::integer: return " INT";
    case FlagKind::real: return " FLOAT";
    case FlagKind::text: return " TEXT";
    case FlagKind::text_list: return " NAME...";
    default: return "";
  }
}

void describe_flags(std::ostringstream& out, const std::vector<FlagSpec>& flags) {
  for (const FlagSpec& f : flags) {
    std::string names = (f.short_name.empty() ? "    " : "-" + f.short_name + ", ") + dashed(f) + kind_word(f.kind);
    if (names.size() < 34) names.resize(34, ' ');
    std::string detail;
    if (f.required) {
      detail = "required";
    } else if (f.kind != FlagKind::boolean && f.kind != FlagKind::count) {
      detail = "default: " + f.default_value.value_or("None");
    }
    if (!f.choices.empty()) {
      std::string c;
      for (const auto& v : f.choices) c += (c.empty() ? "" : ", ") + v;
      detail += (detail.empty() ? "" : "; ") + std::string("one of ") + c;
    }
    out << "  " << names << f.help << (detail.empty() ? "" : " [" + detail + "]") << "\n";
  }
}

// Levenshtein distance, for suggesting the routine a typo meant.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string unknown_routine_message(const std::string& name, const RoutineRegistry& registry) {
  std::string message = "unknown routine '" + name + "'";
  std::string similar;
  const auto consider = [&](std::string_view known) {
    if (edit_distance(known, name) <= 2) similar += (similar.empty() ? "" : ", ") + std::string(known);
  };
  for (const auto& r : registry.all()) consider(r->name());
  for (const auto& r : registry.foreign_routine_names()) consider(r);
  if (!similar.empty()) message += " (did you mean: " + similar + "?)";
  return message + "; kbench --help lists the routines";
}

}  // namespace

std::size_t sweep_size(const CaseArgs& args) {
  std::size_t cases = 1;
  for (const FlagSpec& spec : args.flags()) {
    if (spec.kind != FlagKind::integer && spec.kind != FlagKind::real) continue;
    cases *= std::max<std::size_t>(args.values(spec.name).size(), 1);
    if (cases > kMaxSweepCases) {
      throw UsageError("the sweep's flags make over " + std::to_string(kMaxSweepCases) +
                       " cases (at --" + spec.name + "); split it into several lines");
    }
  }
  return cases;
}

std::vector<CaseArgs> expand_sweep(const CaseArgs& args) {
  std::vector<CaseArgs> cases = {args};
  cases.reserve(sweep_size(args));
  for (const FlagSpec& spec : args.flags()) {
    if (spec.kind != FlagKind::integer && spec.kind != FlagKind::real) continue;
    const std::vector<std::string> values = args.values(spec.name);
    if (values.size() < 2) continue;
    std::vector<CaseArgs> expanded;
    expanded.reserve(cases.size() * values.size());
    for (const CaseArgs& c : cases) {
      for (const std::string& v : values) {
        CaseArgs one = c;
        one.set(spec.name, {v}, c.given(spec.name));
        expanded.push_back(std::move(one));
      }
    }
    cases = std::move(expanded);
  }
  return cases;
}

CaseArgs parse_case(std::span<const std::string> tokens, const RoutineRegistry& registry) {
  const auto routine_name = prescan(tokens, "--routine", "-R");
  if (!routine_name) throw UsageError("--routine is required (kbench --help lists the routines)");
  const Routine* routine = registry.find(*routine_name);
  if (routine == nullptr && registry.is_foreign_routine(*routine_name)) throw RoutineNotBuilt(*routine_name);
  if (routine == nullptr) throw UsageError(unknown_routine_message(*routine_name, registry));
  if (prescan(tokens, "--testlist", "")) throw UsageError("--testlist cannot be combined with --routine");
  return parse_flags(tokens, *routine_name, flags_for(routine), registry);
}

Invocation parse_invocation(std::span<const std::string> tokens, const RoutineRegistry& registry) {
  Invocation inv;
  if (std::find(tokens.begin(), tokens.end(), "--list") != tokens.end()) {
    // --list [--format text|markdown]
    const std::vector<std::string> rest(std::find(tokens.begin(), tokens.end(), "--list") + 1, tokens.end());
    const bool only_list = tokens.size() == 1 || (tokens.size() == 3 && tokens[0] == "--list" && rest.size() == 2 &&
                                                  rest[0] == "--format");
    if (!only_list) throw UsageError("--list takes only --format text|markdown");
    if (tokens.size() == 3 && rest[1] != "text" && rest[1] != "markdown") {
      throw UsageError("--format: invalid choice '" + rest[1] + "' (choose from text, markdown)");
    }
    inv.command = Command::list;
    inv.list_format = tokens.size() == 3 && rest[1] == "markdown" ? ListFormat::markdown : ListFormat::text;
    return inv;
  }
  if (std::any_of(tokens.begin(), tokens.end(), is_help)) {
    inv.command = Command::help;
    const auto routine_name = prescan(tokens, "--routine", "-R");
    if (!routine_name) {
      inv.help_text = top_level_help(registry);
    } else if (const Routine* r = registry.find(*routine_name)) {
      inv.help_text = routine_help(*r);
    } else if (registry.is_foreign_routine(*routine_name)) {
      inv.help_text = "kbench has no " + *routine_name + " yet: it is a routine of the reference tool that kbench "
                      "skips with a warning (kbench --help lists the routines it has).\n";
    } else {
      throw UsageError(unknown_routine_message(*routine_name, registry));
    }
    return inv;
  }
  if (tokens.empty()) throw UsageError("no routine given: use --routine NAME, --testlist FILE or --list (kbench --help)");
  if (prescan(tokens, "--testlist", "")) {
    if (prescan(tokens, "--routine", "-R")) throw UsageError("--testlist cannot be combined with --routine");
    inv.command = Command::run_testlist;
    inv.args = parse_flags(tokens, "", flags_for(nullptr), registry);
    return inv;
  }
  inv.command = Command::run_case;
  inv.args = parse_case(tokens, registry);
  return inv;
}

CaseArgs apply_outer_flags(CaseArgs line_case, const CaseArgs& outer) {
  for (const FlagSpec& spec : shared_flags()) {
    if (!outer.given(spec.name) || spec.name == "testlist") continue;
    if (spec.name == "output_path") {
      line_case.set(spec.name, {outer.text(spec.name)}, true);
    } else if (spec.kind == FlagKind::boolean) {
      line_case.set(spec.name, {"true"}, true);
    } else if (spec.kind == FlagKind::count) {
      const int v = std::max(outer.count(spec.name), line_case.count(spec.name));
      line_case.set(spec.name, {std::to_string(v)}, true);
    } else if (!line_case.given(spec.name)) {
      // Valued flags (-n, --random_seed, --backends, ...) fill in what a line leaves unsaid.
      line_case.set(spec.name, outer.values(spec.name), true);
    }
  }
  return line_case;
}

std::string top_level_help(const RoutineRegistry& registry) {
  std::ostringstream out;
  out << "kbench " << KBENCH_VERSION
      << ": benchmarks of LLM-inference GPU kernels, with flashinfer_benchmark.py's command lines.\n\n"
      << "usage: kbench --routine ROUTINE [flags]          run one case\n"
      << "       kbench --testlist FILE [--output_path CSV] run every case of a testlist\n"
      << "       kbench --list [--format markdown]        routine x backend matrix (this GPU; markdown: the README's)\n"
      << "       kbench --routine ROUTINE --help          a routine's flags and defaults\n"
      << "       kbench compare BASE NEW [options]        two result files case by case (kbench compare --help)\n\n"
      << "Routines:\n";
  std::size_t name_width = 28;
  for (const auto& r : registry.all()) name_width = std::max(name_width, r->name().size() + 2);
  std::string family;
  for (const auto& r : registry.all()) {
    if (r->family() != family) {
      family = r->family();
      out << "  " << family << ":\n";
    }
    std::string name(r->name());
    name.resize(std::max<std::size_t>(name_width, name.size() + 2), ' ');  // names never run into descriptions
    out << "    " << name << r->description() << "\n";
  }
  out << "\nShared flags:\n";
  describe_flags(out, shared_flags());
  return out.str();
}

std::string routine_help(const Routine& routine) {
  std::ostringstream out;
  out << "usage: kbench --routine " << routine.name() << " [flags]\n" << routine.description() << "\n\nBackends: ";
  const auto& backends = routine.backends();
  for (std::size_t i = 0; i < backends.size(); ++i) out << (i ? ", " : "") << backends[i]->name();
  if (routine.has_auto()) out << ", auto (" << routine.auto_rule() << ")";
  out << " (default:";
  for (const auto& b : routine.default_backends()) out << " " << b;
  out << ")\n\n" << routine.name() << " flags:\n";
  describe_flags(out, routine.flags());
  out << "\nShared flags:\n";
  describe_flags(out, shared_flags());
  return out.str();
}

std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto index = slash == std::string::npos ? std::nullopt : whole_number(text.substr(0, slash), 999999);
  const auto count = slash == std::string::npos ? std::nullopt : whole_number(text.substr(slash + 1), 999999);
  if (!index || !count || *count == 0 || *index >= *count) {
    throw UsageError("--shard: expected I/N with 0 <= I < N (e.g. 0/4 ... 3/4), got '" + text + "'");
  }
  return {*index, *count};
}

std::pair<std::size_t, std::size_t> shard_range(std::size_t total, std::pair<std::size_t, std::size_t> shard) {
  const auto [index, count] = shard;
  return {total * index / count, total * (index + 1) / count};
}

std::vector<int> parse_gpu_list(const std::string& text) {
  std::vector<int> indices;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    const auto index = whole_number(item, 1023);
    if (!index) throw UsageError("--gpus: expected all or GPU indices such as 0,1, got '" + text + "'");
    if (std::find(indices.begin(), indices.end(), static_cast<int>(*index)) != indices.end()) {
      throw UsageError("--gpus: GPU " + item + " is named twice");
    }
    indices.push_back(static_cast<int>(*index));
  }
  if (indices.empty() || text.back() == ',') throw UsageError("--gpus: expected all or GPU indices such as 0,1, got '" + text + "'");
  return indices;
}

std::string repro_command(const CaseArgs& args) {
  std::vector<std::string> words = {"kbench"};
  const std::vector<std::string> flags = case_words(args);
  words.insert(words.end(), flags.begin(), flags.end());
  return join_shell_words(words);
}

std::vector<std::string> case_words(const CaseArgs& args) {
  std::vector<std::string> words = {"--routine", args.routine()};
  for (const FlagSpec& spec : args.flags()) {
    if (spec.name == "routine" || spec.name == "testlist" || !args.given(spec.name)) continue;
    switch (spec.kind) {
      case FlagKind::boolean:
        if (args.flag(spec.name)) words.push_back(dashed(spec));
        break;
      case FlagKind::count:  // -vv, as users write it
        if (args.count(spec.name) > 0) words.push_back("-" + std::string(args.count(spec.name), spec.short_name.at(0)));
        break;
      case FlagKind::text_list:
        words.push_back(dashed(spec));
        for (const auto& v : args.list(spec.name)) words.push_back(v);
        break;
      default:
        words.push_back(dashed(spec));
        words.push_back(args.display(spec.name));
        break;
    }
  }
  return words;
}

}  // namespace kbench
