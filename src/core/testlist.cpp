#include "core/testlist.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <filesystem>

#include "core/usage_error.hpp"

namespace kbench {

std::vector<TestlistLine> read_testlist(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw UsageError("--testlist: '" + path + "' is a directory");
  std::ifstream in(path);
  if (!in) throw UsageError("--testlist: cannot read '" + path + "': " + std::strerror(errno));
  std::vector<TestlistLine> lines;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto first = line.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r\n");
    std::string text = line.substr(first, last - first + 1);
    if (text.front() == '#') continue;
    lines.push_back({number, std::move(text)});
  }
  if (in.bad()) throw UsageError("--testlist: error reading '" + path + "'");
  return lines;
}

}  // namespace kbench
