// Runs a program as a child process and waits for it, with an optional time limit: the process
// boundary of --isolate, where a case that faults, traps or hangs takes only its own process down.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kbench {

struct ChildExit {
  enum class How { exited, signalled, timed_out };
  How how = How::exited;
  int code = 0;  // the exit status, or the signal that ended it

  [[nodiscard]] bool ok() const noexcept { return how == How::exited && code == 0; }
  // "exit status 1", "signal 11 (Segmentation fault)", "a kill after its 5 s limit".
  [[nodiscard]] std::string describe(std::optional<double> timeout_seconds) const;
};

// Starts `program` with `arguments` (argv[1..]) and this process's environment plus `environment`,
// its output going where ours goes, and waits. Past `timeout_seconds` the child is killed
// (SIGKILL: a process stuck in a kernel cannot be asked politely). Throws std::runtime_error when
// the child cannot be started.
[[nodiscard]] ChildExit run_child(const std::string& program, const std::vector<std::string>& arguments,
                                  const std::vector<std::pair<std::string, std::string>>& environment,
                                  std::optional<double> timeout_seconds);

// This executable's path, so a process can start another of itself.
[[nodiscard]] std::string self_executable();

}  // namespace kbench
