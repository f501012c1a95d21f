// The results CSV: the reference tool's columns in its order (compat.md), then kbench's own, one
// row per backend per case, appended and flushed as each case ends. Values are quoted per RFC 4180
// (the reference does not quote; a comma in a case tag would break its rows).
#pragma once

#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.hpp"

namespace kbench {

using CsvRow = std::map<std::string, std::string, std::less<>>;

// The reference's columns (deduplicated), kbench's extra result columns, then any routine flag
// kbench adds that the reference has no column for.
[[nodiscard]] std::vector<std::string> csv_columns(const RoutineRegistry& registry);

[[nodiscard]] std::string csv_escape(std::string_view field);
[[nodiscard]] std::string csv_line(const std::vector<std::string>& fields);

// Splits one CSV record (RFC 4180, no embedded newlines) back into fields: for tests and for
// checking the header of a file being appended to.
[[nodiscard]] std::vector<std::string> parse_csv_line(std::string_view line);

class CsvWriter {
 public:
  // Opens `path` for appending: writes the header when the file is new or empty, ends a last line
  // left without its newline, and streams to what is not a regular file (a pipe, /dev/stdout)
  // without reading it. Throws UsageError, naming `flag`, when the file cannot be written or
  // already holds another header (rows under the wrong header break every reader of the file).
  CsvWriter(const std::string& path, std::vector<std::string> columns, std::string_view flag = "--output_path");

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  // Writes one row (columns missing from `row` stay empty) and flushes. Throws std::logic_error
  // for a key that is not a column, std::runtime_error when the write fails.
  void write_row(const CsvRow& row);

 private:
  std::string path_;
  std::vector<std::string> columns_;
  std::ofstream out_;
};

}  // namespace kbench
