#include "core/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace kbench {
namespace {

// posix_spawn's file actions, freed however the spawn ends.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

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

ChildProcess::ChildProcess(const ChildSpec& spec) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(spec.environment.begin(), spec.environment.end(), [&](const auto& kv) {
      return entry.substr(0, kv.first.size() + 1) == kv.first + "=";
    });
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [name, value] : spec.environment) env.push_back(name + "=" + value);
  std::vector<std::string> argv = {spec.program};
  argv.insert(argv.end(), spec.arguments.begin(), spec.arguments.end());

  FileActions actions;
  if (spec.output_path) {
    posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, spec.output_path->c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(actions.get(), STDOUT_FILENO, STDERR_FILENO);
  }
  auto envp = pointers(env);
  auto args = pointers(argv);
  if (const int err = posix_spawn(&pid_, spec.program.c_str(), actions.get(), nullptr, args.data(), envp.data());
      err != 0) {
    throw std::runtime_error("cannot start '" + spec.program + "': " + std::strerror(err));
  }
  if (spec.timeout_seconds) {
    deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                        std::chrono::duration<double>(*spec.timeout_seconds));
  }
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), deadline_(other.deadline_), killed_(other.killed_), exit_(other.exit_) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    (void)waitpid(pid_, &status, 0);
  }
}

std::optional<ChildExit> ChildProcess::poll() {
  if (exit_ || pid_ <= 0) return exit_;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    if (killed_) {
      exit_ = ChildExit{ChildExit::How::timed_out, SIGKILL};
    } else if (WIFSIGNALED(status)) {
      exit_ = ChildExit{ChildExit::How::signalled, WTERMSIG(status)};
    } else {
      exit_ = ChildExit{ChildExit::How::exited, WEXITSTATUS(status)};
    }
    return exit_;
  }
  if (done < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  if (!killed_ && deadline_ && std::chrono::steady_clock::now() >= *deadline_) {
    ::kill(pid_, SIGKILL);
    killed_ = true;
  }
  return std::nullopt;
}

ChildExit ChildProcess::wait() {
  // Polled: a case takes milliseconds to minutes, so a few milliseconds of latency cost nothing and
  // need no signal handling in a process that also drives the GPU.
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    if (const auto exit = poll()) return *exit;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

ChildExit run_child(const ChildSpec& spec) { return ChildProcess(spec).wait(); }

std::string self_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace kbench
