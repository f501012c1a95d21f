#include "core/json_report.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/usage_error.hpp"

namespace kbench {

nlohmann::ordered_json json_value(const std::string& cell) {
  if (cell.empty()) return nullptr;
  if (cell == "True") return true;
  if (cell == "False") return false;
  char* end = nullptr;
  errno = 0;
  const double number = std::strtod(cell.c_str(), &end);
  const bool whole = end == cell.c_str() + cell.size() && errno == 0 && !std::isspace(cell.front());
  if (whole && cell != "inf" && cell != "nan" && cell != "-inf") return number;
  return cell;
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

nlohmann::ordered_json& JsonReporter::document(const std::string& path) {
  auto it = documents_.find(path);
  if (it == documents_.end()) {
    nlohmann::ordered_json doc;
    doc["kbench"] = {{"version", KBENCH_VERSION},
                     {"gpu_name", device_.gpu_name()},
                     {"compute_capability", device_.compute_capability()}};
    doc["results"] = nlohmann::ordered_json::array();
    doc["cases"] = nlohmann::ordered_json::array();
    it = documents_.emplace(path, std::move(doc)).first;
  }
  return it->second;
}

void JsonReporter::report(const BackendResult& r) {
  const auto path = r.args.optional_text("json");
  if (!path) return;
  nlohmann::ordered_json row;
  for (const auto& [column, value] : result_row(r, device_)) row[column] = json_value(value);
  row["mean_time"] = r.timed.stats.mean;
  row["noise_reached"] = r.timed.noise_reached;
  if (!r.timed.conditions.available) row["conditions_unavailable"] = r.timed.conditions.why_not;
  if (r.args.flag("json_samples")) row["samples_ms"] = r.timed.samples_ms;
  if (!r.stages.empty()) {
    row["stages"] = nlohmann::ordered_json::array();
    for (const StageTime& stage : r.stages) {
      row["stages"].push_back({{"name", stage.name}, {"median_time", stage.stats.median}, {"std_time", stage.stats.std},
                               {"num_samples", stage.stats.count}});
    }
  }
  document(*path)["results"].push_back(std::move(row));
}

void JsonReporter::add_results(const std::string& path, const nlohmann::ordered_json& results) {
  auto& target = document(path)["results"];
  for (const auto& row : results) target.push_back(row);
}

void JsonReporter::record_case(const std::string& where, const CaseArgs& args, const CaseOutcome& outcome) {
  if (!args.has("json")) return;
  const std::string path = args.text("json");
  nlohmann::ordered_json c;
  c["where"] = where;
  c["status"] = case_status_key(outcome.status);
  c["reason"] = outcome.reason;
  if (!args.routine().empty()) {
    c["routine"] = args.routine();
    c["args"] = args_json(args);
  }
  c["backends"] = nlohmann::ordered_json::array();
  for (const BackendOutcome& b : outcome.backends) {
    c["backends"].push_back({{"backend", b.label}, {"disposition", disposition_key(b.disposition)}, {"reason", b.reason}});
  }
  document(path)["cases"].push_back(std::move(c));
  write(path);
}

void JsonReporter::write(const std::string& path) const {
  // Written whole to a temporary file and renamed over the old one: a reader never sees half.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) throw UsageError("--json: cannot write '" + temporary + "': " + std::strerror(errno));
    out << documents_.at(path).dump(1) << '\n';
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw UsageError("--json: cannot write '" + path + "': " + ec.message());
}

}  // namespace kbench
