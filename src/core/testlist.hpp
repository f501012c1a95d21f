// Testlist files: one case per line; lines are stripped; blank lines and lines starting with '#'
// are skipped; each remaining line is split shell-style and parsed on its own.
#pragma once

#include <string>
#include <vector>

namespace kbench {

struct TestlistLine {
  int number = 0;    // 1-based line number in the file
  std::string text;  // stripped
};

// Throws UsageError when the file cannot be read.
[[nodiscard]] std::vector<TestlistLine> read_testlist(const std::string& path);

}  // namespace kbench
