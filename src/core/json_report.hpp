// --json PATH: one JSON document per path, rewritten as each case ends so nothing is lost to a
// crash. "results" holds one object per measured backend, keyed by the CSV's column names (numbers
// as numbers, True/False as booleans; with --json_samples also "samples_ms"); "cases" holds every
// case with its arguments and every backend's disposition and reason, skipped ones too. `kbench
// compare` reads "results".
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "core/case_args.hpp"
#include "core/device_info.hpp"
#include "core/outcome.hpp"
#include "core/reporter.hpp"

namespace kbench {

class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(const DeviceInfo& device) : device_(device) {}
  void report(const BackendResult& result) override;
  // The results a child process of --isolate measured (its own document's "results").
  void add_results(const std::string& path, const nlohmann::ordered_json& results);
  // Adds a case to the --json document of `args` and writes it. `args` are the case's, or, for a
  // testlist line that never became a case, the testlist command's (no "args" then).
  void record_case(const std::string& where, const CaseArgs& args, const CaseOutcome& outcome);

 private:
  nlohmann::ordered_json& document(const std::string& path);
  void write(const std::string& path) const;

  DeviceInfo device_;
  std::map<std::string, nlohmann::ordered_json> documents_;
};

// A CSV cell as JSON: a number where the whole text is one, True/False as booleans, empty as null.
[[nodiscard]] nlohmann::ordered_json json_value(const std::string& cell);
// The case's flags by name, typed (as the [INFO] args line prints them).
[[nodiscard]] nlohmann::ordered_json args_json(const CaseArgs& args);

}  // namespace kbench
