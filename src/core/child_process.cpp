#include "core/child_process.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace kbench {

std::string ChildExit::describe(std::optional<double> timeout_seconds) const {
  switch (how) {
    case How::exited: return "exit status " + std::to_string(code);
    case How::signalled: return "signal " + std::to_string(code) + " (" + strsignal(code) + ")";
    case How::timed_out: {
      std::string limit = timeout_seconds ? std::to_string(*timeout_seconds) : "?";
      limit.erase(limit.find_last_not_of('0') + 1);
      if (!limit.empty() && limit.back() == '.') limit.pop_back();
      return "a kill after its " + limit + " s limit";
    }
  }
  return "?";
}

ChildExit run_child(const std::string& program, const std::vector<std::string>& arguments,
                    const std::vector<std::pair<std::string, std::string>>& environment,
                    std::optional<double> timeout_seconds) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(environment.begin(), environment.end(), [&](const auto& kv) {
      return entry.substr(0, kv.first.size() + 1) == kv.first + "=";
    });
    if (!replaced) env_strings.emplace_back(entry);
  }
  for (const auto& [name, value] : environment) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = {program};
  argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  if (const int err = posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv.data(), envp.data()); err != 0) {
    throw std::runtime_error("cannot start '" + program + "': " + std::strerror(err));
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = timeout_seconds ? std::optional(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                                           std::chrono::duration<double>(*timeout_seconds)))
                                        : std::nullopt;
  // Polled: a case takes milliseconds to minutes, so a few milliseconds of latency cost nothing and
  // need no signal handling in a process that also drives the GPU.
  auto pause = std::chrono::microseconds(200);
  bool killed = false;
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, killed ? 0 : WNOHANG);
    if (done == pid) {
      if (killed) return {ChildExit::How::timed_out, SIGKILL};
      if (WIFSIGNALED(status)) return {ChildExit::How::signalled, WTERMSIG(status)};
      return {ChildExit::How::exited, WEXITSTATUS(status)};
    }
    if (done < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    if (deadline && Clock::now() >= *deadline) {
      ::kill(pid, SIGKILL);
      killed = true;
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

std::string self_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace kbench
