// Command-line flags as data: the shared flags of every routine and each routine's own flags are
// FlagSpecs, so parsing, help, the CSV columns and repro commands all come from one description.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kbench {

enum class FlagKind {
  integer,    // an integer; several values sweep (kbench runs every combination)
  real,       // a floating-point number; several values sweep
  text,       // one string value (choices may restrict it)
  text_list,  // one or more strings (--backends fa2 cudnn)
  boolean,    // present or not (store_true)
  count,      // counted occurrences (-v, -vv)
};

struct FlagSpec {
  std::string name;        // long name without the dashes: "batch_size"
  FlagKind kind = FlagKind::text;
  std::optional<std::string> default_value;  // nullopt: no value ("None")
  std::string help;
  std::vector<std::string> choices;  // empty: any value of the kind
  bool required = false;
  std::string short_name;  // "n" for -n, or empty
};

// The flags every routine accepts (compat.md's shared flags), in the reference's order.
[[nodiscard]] const std::vector<FlagSpec>& shared_flags();

}  // namespace kbench
