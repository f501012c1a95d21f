// The parsed, validated arguments of one case: the routine, and a value for every flag (shared and
// routine flags alike), remembering which flags the user gave so a repro command can say them back.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/flags.hpp"

namespace kbench {

class CaseArgs {
 public:
  CaseArgs() = default;
  CaseArgs(std::string routine, std::vector<FlagSpec> flags) : routine_(std::move(routine)), flags_(std::move(flags)) {}

  [[nodiscard]] const std::string& routine() const noexcept { return routine_; }
  // Shared flags first, then the routine's own, in declaration order.
  [[nodiscard]] const std::vector<FlagSpec>& flags() const noexcept { return flags_; }
  [[nodiscard]] const FlagSpec* find_flag(std::string_view name) const;

  // Values are validated when set (CLI parsing), so the typed getters below only throw
  // std::logic_error for a flag the routine does not declare or a kind mismatch.
  [[nodiscard]] bool has(std::string_view name) const;  // a value (given or default) exists
  // Every value of a flag (several for a sweep before expand_sweep); empty when it has none.
  [[nodiscard]] std::vector<std::string> values(std::string_view name) const;
  [[nodiscard]] int64_t integer(std::string_view name) const;
  [[nodiscard]] std::optional<int64_t> optional_integer(std::string_view name) const;
  [[nodiscard]] double real(std::string_view name) const;
  [[nodiscard]] const std::string& text(std::string_view name) const;
  [[nodiscard]] std::optional<std::string> optional_text(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& list(std::string_view name) const;
  [[nodiscard]] bool flag(std::string_view name) const;  // boolean flags
  [[nodiscard]] int count(std::string_view name) const;  // count flags (-vv)

  // The value as the CSV and repro command spell it (booleans True/False; lists space-joined);
  // empty when the flag has no value.
  [[nodiscard]] std::string display(std::string_view name) const;

  void set(const std::string& name, std::vector<std::string> values, bool given);
  // Forgets a flag's value and that it was given.
  void unset(std::string_view name);
  [[nodiscard]] bool given(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& given_order() const noexcept { return given_order_; }

  bool operator==(const CaseArgs& other) const;

 private:
  [[nodiscard]] const std::vector<std::string>& values_of(std::string_view name, FlagKind kind) const;
  std::string routine_;
  std::vector<FlagSpec> flags_;
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
  std::vector<std::string> given_order_;
};

}  // namespace kbench
