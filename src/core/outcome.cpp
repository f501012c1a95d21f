#include "core/outcome.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace kbench {

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

NLOHMANN_JSON_SERIALIZE_ENUM(Disposition, {{Disposition::passed, "passed"},
                                           {Disposition::not_verified, "not_verified"},
                                           {Disposition::incorrect, "incorrect"},
                                           {Disposition::not_supported, "not_supported"},
                                           {Disposition::failed, "failed"}})
NLOHMANN_JSON_SERIALIZE_ENUM(CaseStatus, {{CaseStatus::passed, "passed"},
                                          {CaseStatus::failed, "failed"},
                                          {CaseStatus::skipped, "skipped"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BackendOutcome, label, disposition, reason)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CaseOutcome, status, reason, backends)

std::string disposition_key(Disposition d) { return nlohmann::json(d).get<std::string>(); }
std::string case_status_key(CaseStatus s) { return nlohmann::json(s).get<std::string>(); }

std::string case_outcome_json(const CaseOutcome& outcome) { return nlohmann::json(outcome).dump(); }

CaseOutcome parse_case_outcome(std::string_view json) {
  try {
    return nlohmann::json::parse(json).get<CaseOutcome>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("not a case outcome: ") + e.what());
  }
}

}  // namespace kbench
