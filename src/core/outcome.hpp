// How a case and each of its backends ended, as the summary counts them; written as JSON by a
// child process of --isolate and read back by its parent.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kbench {

// How a backend's part of a case ended.
enum class Disposition {
  passed,         // ran and passed the refcheck
  not_verified,   // ran and was timed; no --refcheck
  incorrect,      // failed the refcheck
  not_supported,  // skipped: this GPU, this build or this problem (reason)
  failed,         // an error while preparing, checking or timing it (reason)
};
[[nodiscard]] std::string_view disposition_name(Disposition d);

struct BackendOutcome {
  std::string label;  // as [PERF] names it: "fa2", "auto(fa3)"
  Disposition disposition = Disposition::not_supported;
  std::string reason;
};

enum class CaseStatus { passed, failed, skipped };

struct CaseOutcome {
  CaseStatus status = CaseStatus::passed;
  std::string reason;  // why it failed or was skipped
  std::vector<BackendOutcome> backends;
};

// The words the JSON uses: "not_verified", "skipped", ...
[[nodiscard]] std::string disposition_key(Disposition d);
[[nodiscard]] std::string case_status_key(CaseStatus s);

// One JSON object; parse_case_outcome throws std::runtime_error on text it did not write.
[[nodiscard]] std::string case_outcome_json(const CaseOutcome& outcome);
[[nodiscard]] CaseOutcome parse_case_outcome(std::string_view json);

}  // namespace kbench
