// Child processes for --isolate and --gpus: a case that faults, traps or hangs takes only its own
// process down, and cases run side by side on several GPUs.
#pragma once

#include <sys/types.h>

#include <chrono>
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

struct ChildSpec {
  std::string program;
  std::vector<std::string> arguments;                         // argv[1..]
  std::vector<std::pair<std::string, std::string>> environment;  // added to (or replacing) ours
  std::optional<std::string> output_path;                     // stdout and stderr to this file; else ours
  std::optional<double> timeout_seconds;                      // killed (SIGKILL) past this
};

// A started child. Destroying one that still runs kills it.
class ChildProcess {
 public:
  // Throws std::runtime_error when the child cannot be started.
  explicit ChildProcess(const ChildSpec& spec);
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Without blocking: how it ended, or nothing while it runs. Past its time limit it is killed
  // (SIGKILL: a process stuck in a kernel cannot be asked politely) and reported as timed out.
  [[nodiscard]] std::optional<ChildExit> poll();
  // Blocks until it ends (polling, with the time limit applied).
  [[nodiscard]] ChildExit wait();

 private:
  pid_t pid_ = -1;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  bool killed_ = false;
  std::optional<ChildExit> exit_;
};

// Starts a child and waits for it.
[[nodiscard]] ChildExit run_child(const ChildSpec& spec);

// This executable's path, so a process can start another of itself.
[[nodiscard]] std::string self_executable();

}  // namespace kbench
