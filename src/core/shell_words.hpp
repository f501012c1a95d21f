// Shell-style word splitting and quoting (the semantics of Python's shlex.split / shlex.quote in
// POSIX mode), used for testlist lines and repro commands.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kbench {

// Splits a line into words. Throws UsageError on an unterminated quote or a trailing backslash.
[[nodiscard]] std::vector<std::string> split_shell_words(std::string_view line);

// Quotes one word so that a POSIX shell (and split_shell_words) reads it back unchanged.
[[nodiscard]] std::string shell_quote(std::string_view word);

[[nodiscard]] std::string join_shell_words(std::span<const std::string> words);

}  // namespace kbench
