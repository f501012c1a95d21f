#include "core/shell_words.hpp"

#include <utility>

#include "core/usage_error.hpp"

namespace kbench {

std::vector<std::string> split_shell_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      const std::size_t end = line.find('\'', i + 1);
      if (end == std::string_view::npos) throw UsageError("unterminated single quote in: " + std::string(line));
      word.append(line.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        // Inside double quotes a backslash escapes only a double quote or a backslash, as Python's
        // shlex.split (the reference's testlist reader) has it; before `$` or a backtick it stays.
        if (line[j] == '\\' && j + 1 < line.size() && (line[j + 1] == '"' || line[j + 1] == '\\')) {
          ++j;
        }
        word.push_back(line[j]);
      }
      if (j >= line.size()) throw UsageError("unterminated double quote in: " + std::string(line));
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= line.size()) throw UsageError("trailing backslash in: " + std::string(line));
      word.push_back(line[++i]);
    } else {
      word.push_back(c);
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string shell_quote(std::string_view word) {
  if (word.empty()) return "''";
  constexpr std::string_view safe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-";
  if (word.find_first_not_of(safe) == std::string_view::npos) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\"'\"'";
    } else {
      quoted.push_back(c);
    }
  }
  quoted.push_back('\'');
  return quoted;
}

std::string join_shell_words(std::span<const std::string> words) {
  std::string line;
  for (const std::string& w : words) {
    if (!line.empty()) line.push_back(' ');
    line += shell_quote(w);
  }
  return line;
}

}  // namespace kbench
