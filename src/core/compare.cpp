#include "core/compare.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/csv.hpp"
#include "core/log.hpp"
#include "core/runner.hpp"
#include "core/usage_error.hpp"

namespace kbench {
namespace {

// A row of either format: column -> canonical text (empty when absent).
using RawRow = std::map<std::string, std::string, std::less<>>;

std::optional<double> parse_number(std::string_view text) {
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string shortest(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

// Numbers by value, so that a CSV's "16" or "1.0" and a JSON 16 or 1.0 agree.
std::string canonical(std::string text) {
  const auto number = parse_number(text);
  return number ? shortest(*number) : text;
}

std::string canonical(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";  // the CSV's (Python's) spelling
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number_unsigned()) return std::to_string(value.get<std::uint64_t>());
  if (value.is_number()) return shortest(value.get<double>());
  if (value.is_string()) return canonical(value.get<std::string>());
  return "";  // null, arrays (samples_ms) and objects are never a column's value
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("compare: cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError("compare: cannot read '" + path + "'");
  return text.str();
}

[[noreturn]] void not_a_result_file(const std::string& path, const std::string& why) {
  throw UsageError("compare: '" + path + "' is not a kbench result file: " + why);
}

std::vector<RawRow> read_csv_rows(const std::string& path, const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  const std::vector<std::string> header = parse_csv_line(line);
  std::vector<RawRow> rows;
  for (int line_number = 2; std::getline(lines, line); ++line_number) {
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> fields = parse_csv_line(line);
    if (fields.size() != header.size()) {
      not_a_result_file(path, "line " + std::to_string(line_number) + " has " + std::to_string(fields.size()) +
                                  " fields, the header " + std::to_string(header.size()));
    }
    RawRow row;
    for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = canonical(fields[i]);
    rows.push_back(std::move(row));
  }
  for (const char* required : {"routine", "backend", "median_time"}) {
    if (std::find(header.begin(), header.end(), required) == header.end()) {
      not_a_result_file(path, std::string("no '") + required + "' column");
    }
  }
  if (std::find(header.begin(), header.end(), "num_samples") == header.end() &&
      std::find(header.begin(), header.end(), "noise") == header.end()) {
    not_a_result_file(path, "no 'num_samples' or 'noise' column (the reference tool's CSVs record no sample "
                            "count, so their noise is unknown)");
  }
  return rows;
}

std::vector<RawRow> read_json_rows(const std::string& path, const std::string& text) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    not_a_result_file(path, std::string("not JSON (") + error.what() + ")");
  }
  if (!document.is_object() || !document.contains("kbench") || !document.contains("results") ||
      !document["results"].is_array()) {
    not_a_result_file(path, "a JSON result file is {\"kbench\": {...}, \"results\": [...]}");
  }
  std::vector<RawRow> rows;
  for (const nlohmann::json& result : document["results"]) {
    if (!result.is_object()) not_a_result_file(path, "a result is not a JSON object");
    RawRow row;
    for (const auto& [key, value] : result.items()) row[key] = canonical(value);
    if (!row.contains("routine") || !row.contains("backend")) {
      not_a_result_file(path, "result " + std::to_string(rows.size() + 1) + " has no routine or backend");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string field(const RawRow& row, std::string_view column) {
  const auto it = row.find(column);
  return it == row.end() ? std::string() : it->second;
}

// A numeric column's value; none when empty. Throws UsageError when it holds something else.
std::optional<double> number_field(const RawRow& row, std::string_view column, const std::string& where) {
  const std::string text = field(row, column);
  if (text.empty()) return std::nullopt;
  const auto value = parse_number(text);
  if (!value || !std::isfinite(*value) || *value < 0) {
    throw UsageError("compare: " + where + ": " + std::string(column) + " '" + text + "' is not a time, count or fraction");
  }
  return value;
}

// The relative standard error of the row's median (the rule in compare.hpp).
std::optional<double> relative_error(const RawRow& row, double median, const std::string& where) {
  if (const auto noise = number_field(row, "noise", where)) return noise;
  const auto samples = number_field(row, "num_samples", where);
  auto sigma = number_field(row, "std_time", where);
  if (!sigma) {
    const auto min = number_field(row, "min_time", where);
    const auto max = number_field(row, "max_time", where);
    if (min && max) sigma = (*max - *min) / 4.0;
  }
  if (!samples || *samples < 2 || !sigma) return std::nullopt;
  constexpr double kMedianEfficiency = 1.2533;  // sqrt(pi / 2): a median's standard error over a mean's
  return kMedianEfficiency * *sigma / std::sqrt(*samples) / median;
}

Measurement to_measurement(const RawRow& row, const std::string& where) {
  Measurement m;
  m.routine = field(row, "routine");
  m.backend = field(row, "backend");
  m.case_tag = field(row, "case_tag");
  m.timer = field(row, "timer");
  m.sm_clock_mhz = number_field(row, "sm_clock_mhz", where);
  for (const auto& [column, value] : row) {
    if (!value.empty() && is_configuration_column(column)) m.configuration.emplace_back(column, value);
  }
  m.median_ms = number_field(row, "median_time", where);
  if (m.median_ms && *m.median_ms == 0) throw UsageError("compare: " + where + ": median_time is 0");
  if (m.median_ms) {
    m.relative_error = relative_error(row, *m.median_ms, where);
  } else {
    const std::string disposition = field(row, "disposition");
    const std::string reason = field(row, "reason");
    m.not_measured_reason = disposition.empty() ? "no median time" : disposition;
    if (!reason.empty()) m.not_measured_reason += ": " + reason;
  }
  return m;
}

std::string identity(const Measurement& m) {
  std::string key = m.routine + '\x1f' + m.backend;
  for (const auto& [column, value] : m.configuration) key += '\x1f' + column + '=' + value;
  return key;
}

// The measurements of a file, one per case: a case written twice keeps its last row.
std::vector<const Measurement*> last_row_of_each_case(const ResultFile& file) {
  std::map<std::string, std::size_t> last;
  for (std::size_t i = 0; i < file.rows.size(); ++i) last[identity(file.rows[i])] = i;
  std::vector<const Measurement*> rows;
  for (std::size_t i = 0; i < file.rows.size(); ++i) {
    if (last[identity(file.rows[i])] == i) rows.push_back(&file.rows[i]);
  }
  return rows;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100.0 * fraction);
  return text;
}

CaseComparison only_in_one_file(const Measurement* base, const Measurement* next) {
  CaseComparison c;
  c.base = base;
  c.next = next;
  c.verdict = base != nullptr ? Verdict::removed : Verdict::added;
  return c;
}

CaseComparison judge(const Measurement& base, const Measurement& next, const CompareOptions& options) {
  CaseComparison c;
  c.base = &base;
  c.next = &next;
  if (!next.median_ms) {
    c.verdict = Verdict::removed;
    c.note = "not measured in NEW: " + next.not_measured_reason;
    return c;
  }
  if (!base.median_ms) {
    c.verdict = Verdict::added;
    c.note = "not measured in BASE: " + base.not_measured_reason;
    return c;
  }
  c.change = *next.median_ms / *base.median_ms - 1.0;
  if (!base.timer.empty() && !next.timer.empty() && base.timer != next.timer) {
    c.note = "timer " + base.timer + " -> " + next.timer;  // CUPTI fell back to events in one run
  }
  if (base.sm_clock_mhz && next.sm_clock_mhz && *base.sm_clock_mhz > 0 &&
      std::abs(*next.sm_clock_mhz / *base.sm_clock_mhz - 1.0) > kClockNoteFraction) {
    char clock[96];
    std::snprintf(clock, sizeof clock, "SM clock %.0f -> %.0f MHz (%+.1f%%)", *base.sm_clock_mhz, *next.sm_clock_mhz,
                  100 * (*next.sm_clock_mhz / *base.sm_clock_mhz - 1.0));
    c.note += (c.note.empty() ? "" : "; ") + std::string(clock);
  }
  const auto noisy = [&](const Measurement& m, std::string_view run) -> std::optional<std::string> {
    if (!m.relative_error) {
      return std::string(run) + " noise unknown (no noise or spread recorded, or fewer than 2 samples)";
    }
    if (*m.relative_error > options.max_noise) {
      return std::string(run) + " noise " + percent(*m.relative_error) + " > " + percent(options.max_noise);
    }
    return std::nullopt;
  };
  for (const auto& why : {noisy(base, "BASE"), noisy(next, "NEW")}) {
    if (!why) continue;
    c.verdict = Verdict::noisy;
    c.note += (c.note.empty() ? "" : "; ") + *why;
  }
  if (c.verdict == Verdict::noisy) return c;
  c.threshold = std::max(options.threshold_sigma * std::hypot(*base.relative_error, *next.relative_error),
                         options.min_change);
  c.verdict = std::abs(c.change) <= c.threshold ? Verdict::same : c.change > 0 ? Verdict::slow : Verdict::fast;
  return c;
}

// Per routine, the configuration columns whose values differ among its rows (a column some rows
// lack differs too: absent reads as empty): what tells its cases apart in the table.
std::map<std::string, std::set<std::string>> varying_columns(const ResultFile& base, const ResultFile& next) {
  struct Column {
    std::set<std::string> values;
    std::size_t rows = 0;
  };
  std::map<std::string, std::map<std::string, Column>> columns;  // routine -> column -> what it holds
  std::map<std::string, std::size_t> routine_rows;
  for (const ResultFile* file : {&base, &next}) {
    for (const Measurement& m : file->rows) {
      ++routine_rows[m.routine];
      for (const auto& [name, value] : m.configuration) {
        Column& column = columns[m.routine][name];
        column.values.insert(value);
        ++column.rows;
      }
    }
  }
  std::map<std::string, std::set<std::string>> varying;
  for (const auto& [routine, by_name] : columns) {
    for (const auto& [name, column] : by_name) {
      if (column.values.size() > 1 || column.rows < routine_rows[routine]) varying[routine].insert(name);
    }
  }
  return varying;
}

std::string case_summary(const Measurement& m, const std::set<std::string>& varying) {
  std::string summary;
  for (const auto& [column, value] : m.configuration) {
    if (varying.contains(column)) summary += (summary.empty() ? "" : " ") + column + "=" + value;
  }
  if (summary.empty()) summary = m.case_tag.empty() ? "-" : m.case_tag;
  return summary;
}

std::string milliseconds(const std::optional<double>& value) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.5g", *value);
  return text;
}

void print_table(const std::vector<CaseComparison>& comparisons, const ResultFile& base, const ResultFile& next,
                 std::ostream& out) {
  const auto varying = varying_columns(base, next);
  std::vector<std::vector<std::string>> table = {
      {"routine", "case", "backend", "base ms", "new ms", "change", "threshold", "verdict", "note"}};
  for (const CaseComparison& c : comparisons) {
    const Measurement& m = c.base != nullptr ? *c.base : *c.next;
    const bool judged = c.verdict == Verdict::same || c.verdict == Verdict::slow || c.verdict == Verdict::fast;
    const bool matched = c.base != nullptr && c.next != nullptr && c.base->median_ms && c.next->median_ms;
    char change[32] = "-";
    if (matched) std::snprintf(change, sizeof change, "%+.2f%%", 100.0 * c.change);
    const auto found = varying.find(m.routine);
    table.push_back({m.routine, case_summary(m, found == varying.end() ? std::set<std::string>{} : found->second),
                     m.backend, milliseconds(c.base ? c.base->median_ms : std::nullopt),
                     milliseconds(c.next ? c.next->median_ms : std::nullopt), change,
                     judged ? percent(c.threshold) : "-", std::string(verdict_name(c.verdict)), c.note});
  }
  std::vector<std::size_t> width(table.front().size(), 0);
  for (const auto& row : table) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  constexpr std::size_t kFirstNumberColumn = 3, kLastNumberColumn = 6;  // right-aligned
  for (const auto& row : table) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      const bool number = i >= kFirstNumberColumn && i <= kLastNumberColumn;
      line += number ? pad + row[i] : row[i] + (i + 1 < row.size() ? pad : "");
      if (i + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

const char* const kHelp = R"(usage: kbench compare BASE NEW [--threshold_sigma K] [--min_change PCT] [--max_noise PCT]
                      [--fail_on slow|any]

Compares two kbench result files (CSV or JSON, told apart by their first character) case by case.

Cases: rows match by routine, backend and every configuration column (every flag column but the
run's records: repro_command, gpu_name, timer, use_cupti, calls_per_graph, case_tag, refcheck,
allow_output_mismatch, generate_repro_command, baseline, output_path, clock and power readings),
empty values left out. A case in one file only is ADDED or REMOVED (also: not measured in NEW).

Noise: each median's relative standard error u is the row's `noise`, else
1.2533 * std_time / sqrt(num_samples) / median_time (std_time missing: (max_time - min_time) / 4).

Verdict, change = new / base - 1, threshold = max(K * sqrt(u_base^2 + u_new^2), min_change):
  NOISY  u of either run unknown or above --max_noise: no verdict can be trusted
  SAME   |change| <= threshold
  SLOW   change > threshold          FAST   change < -threshold

Options:
  --threshold_sigma K  combined standard errors a change must exceed (default 3)
  --min_change PCT     smallest change that counts, in percent (default 1)
  --max_noise PCT      largest trusted noise of a median, in percent (default 5)
  --fail_on WHAT       slow: exit 1 on a SLOW verdict (default); any: on any verdict but SAME

Exit status: 0 no regression, 1 a verdict --fail_on names, 2 usage error (bad option, unreadable
file, not a kbench result file).
)";

}  // namespace

const std::set<std::string, std::less<>>& run_record_columns() {
  static const std::set<std::string, std::less<>> not_configuration = {
      // measurements
      "median_time", "std_time", "min_time", "max_time", "num_samples", "noise", "tflops", "tb_per_sec",
      "resolved_backend", "avg_actual_seq_len", "refcheck_status", "speedup_over_baseline", "samples_ms",
      "disposition", "reason", "mean_time", "noise_reached", "autotuned",
      // the GPU's conditions during the run (with every *clock* and *power* column below)
      "temperature_c", "throttle_reasons", "conditions_unavailable",
      // the run's records and reporting switches
      "repro_command", "gpu_name", "timer", "calls_per_graph", "use_cupti", "output_path", "baseline_csv", "baseline",
      "case_tag", "refcheck", "allow_output_mismatch", "generate_repro_command", "json", "json_samples", "verbose",
      // identity itself
      "routine", "backend"};
  return not_configuration;
}

bool is_configuration_column(std::string_view column) {
  return !run_record_columns().contains(column) && column.find("clock") == std::string_view::npos &&
         column.find("power") == std::string_view::npos;
}

ResultFile read_result_file(const std::string& path) {
  const std::string text = read_whole_file(path);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) not_a_result_file(path, "it is empty");
  const std::vector<RawRow> rows = text[first] == '{' ? read_json_rows(path, text) : read_csv_rows(path, text);
  ResultFile file;
  file.path = path;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    file.rows.push_back(to_measurement(rows[i], "'" + path + "' row " + std::to_string(i + 1)));
    if (file.gpu_name.empty()) file.gpu_name = field(rows[i], "gpu_name");
  }
  return file;
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::fast: return "FAST";
    case Verdict::slow: return "SLOW";
    case Verdict::same: return "SAME";
    case Verdict::noisy: return "NOISY";
    case Verdict::added: return "ADDED";
    case Verdict::removed: return "REMOVED";
  }
  return "?";
}

std::vector<CaseComparison> compare_results(const ResultFile& base, const ResultFile& next, const CompareOptions& options) {
  const std::vector<const Measurement*> base_rows = last_row_of_each_case(base);
  const std::vector<const Measurement*> next_rows = last_row_of_each_case(next);
  std::map<std::string, const Measurement*> next_by_case;
  for (const Measurement* m : next_rows) next_by_case[identity(*m)] = m;
  std::set<std::string> matched;
  std::vector<CaseComparison> comparisons;
  for (const Measurement* m : base_rows) {
    const auto it = next_by_case.find(identity(*m));
    if (it == next_by_case.end()) {
      if (m->median_ms) comparisons.push_back(only_in_one_file(m, nullptr));
      continue;
    }
    matched.insert(it->first);
    if (m->median_ms || it->second->median_ms) comparisons.push_back(judge(*m, *it->second, options));
  }
  for (const Measurement* m : next_rows) {
    if (m->median_ms && !matched.contains(identity(*m))) comparisons.push_back(only_in_one_file(nullptr, m));
  }
  return comparisons;
}

int compare_exit_status(const std::vector<CaseComparison>& comparisons, FailOn fail_on) {
  const bool fails = std::any_of(comparisons.begin(), comparisons.end(), [&](const CaseComparison& c) {
    return fail_on == FailOn::any ? c.verdict != Verdict::same : c.verdict == Verdict::slow;
  });
  return fails ? kExitRegression : kExitOk;
}

int compare_main(std::span<const std::string> arguments, std::ostream& out) {
  const Log log(out);
  if (std::any_of(arguments.begin(), arguments.end(), [](const std::string& a) { return a == "-h" || a == "--help"; })) {
    out << kHelp << std::flush;
    return kExitOk;
  }
  CompareOptions options;
  std::vector<std::string> files;
  double min_change_percent = 100.0 * options.min_change;
  double max_noise_percent = 100.0 * options.max_noise;
  CLI::App app{"kbench compare"};
  app.set_help_flag();  // handled above, with the rule in words
  app.add_option("files", files);
  app.add_option("--threshold_sigma", options.threshold_sigma)->check(CLI::PositiveNumber);
  app.add_option("--min_change", min_change_percent)->check(CLI::NonNegativeNumber);
  app.add_option("--max_noise", max_noise_percent)->check(CLI::NonNegativeNumber);
  app.add_option("--fail_on", options.fail_on)
      ->transform(CLI::CheckedTransformer(std::map<std::string, FailOn>{{"slow", FailOn::slow}, {"any", FailOn::any}}));
  try {
    std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());  // CLI11 parses a reversed vector
    app.parse(reversed);
    if (files.size() != 2) throw UsageError("compare: needs two result files, BASE and NEW");
    options.min_change = min_change_percent / 100.0;
    options.max_noise = max_noise_percent / 100.0;
    const ResultFile base = read_result_file(files[0]);
    const ResultFile next = read_result_file(files[1]);
    if (!base.gpu_name.empty() && !next.gpu_name.empty() && base.gpu_name != next.gpu_name) {
      log.warning("compare: the runs are from different GPUs: " + base.gpu_name + " (BASE), " + next.gpu_name + " (NEW)");
    }
    const std::vector<CaseComparison> comparisons = compare_results(base, next, options);
    print_table(comparisons, base, next, out);
    std::map<Verdict, int> counts;
    for (const CaseComparison& c : comparisons) ++counts[c.verdict];
    std::ostringstream summary;
    summary << "compare: " << comparisons.size() - counts[Verdict::added] - counts[Verdict::removed]
            << " cases in both: " << counts[Verdict::slow] << " SLOW, " << counts[Verdict::fast] << " FAST, "
            << counts[Verdict::same] << " SAME, " << counts[Verdict::noisy] << " NOISY; " << counts[Verdict::added]
            << " ADDED, " << counts[Verdict::removed] << " REMOVED (threshold max(" << shortest(options.threshold_sigma)
            << " sigma, " << percent(options.min_change) << "), noise limit " << percent(options.max_noise) << ")";
    log.info(summary.str());
    const int status = compare_exit_status(comparisons, options.fail_on);
    log.info(status == kExitOk ? "compare: no regression"
                               : std::string("compare: regression (--fail_on ") +
                                     (options.fail_on == FailOn::slow ? "slow" : "any") + ")");
    return status;
  } catch (const CLI::ParseError& error) {
    log.error("compare: " + std::string(error.what()) + " (kbench compare --help)");
  } catch (const UsageError& error) {
    log.error(error.what());
  }
  return kExitUsage;
}

}  // namespace kbench
