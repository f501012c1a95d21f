#include "dist/launcher.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/child_process.hpp"
#include "core/log.hpp"
#include "dist/rank_environment.hpp"
#include "dist/rendezvous.hpp"
#include "dist/seconds_text.hpp"
#include "dist/socket.hpp"

namespace kbench::dist {
namespace {

using Clock = std::chrono::steady_clock;

// The grace the other ranks get after one failed: by then they have hit the failure themselves
// (a rendezvous or collective timeout) or are stuck.
constexpr double kDefaultGraceSeconds = 30.0;

std::vector<std::pair<std::string, std::string>> rank_environment(int rank, int nproc, int port) {
  std::vector<std::pair<std::string, std::string>> environment = {
      {"KBENCH_RANK", std::to_string(rank)},         {"KBENCH_WORLD_SIZE", std::to_string(nproc)},
      {"KBENCH_LOCAL_RANK", std::to_string(rank)},   {"KBENCH_LOCAL_SIZE", std::to_string(nproc)},
      {"KBENCH_MASTER_ADDR", "127.0.0.1"},           {"KBENCH_MASTER_PORT", std::to_string(port)}};
  // NVLink multicast (NVLS) stays off (World::create says why) unless the user set it.
  if (!process_getenv("NCCL_NVLS_ENABLE")) environment.emplace_back("NCCL_NVLS_ENABLE", "0");
  return environment;
}

// The launcher's status for a rank that failed: its exit status, 1 for a signal.
int failure_status(const ChildExit& exit) { return exit.how == ChildExit::How::exited ? exit.code : 1; }

}  // namespace

int launch_local(int nproc, const std::string& program, const std::vector<std::string>& arguments,
                 std::ostream& err) {
  const Log log(err);
  if (nproc < 1) {
    log.error("--nproc " + std::to_string(nproc) + ": at least 1 process");
    return 2;
  }
  double grace_seconds = kDefaultGraceSeconds;
  int port = 0;
  try {
    grace_seconds = dist_timeout(process_getenv).value_or(kDefaultGraceSeconds);
    port = free_tcp_port();
  } catch (const std::runtime_error& error) {
    log.error(error.what());
    return 2;
  }

  // Null once a rank has ended (or was killed: destroying a running ChildProcess kills it).
  std::vector<std::unique_ptr<ChildProcess>> ranks;
  try {
    for (int rank = 0; rank < nproc; ++rank) {
      ranks.push_back(std::make_unique<ChildProcess>(
          ChildSpec{program, arguments, rank_environment(rank, nproc, port), std::nullopt, std::nullopt}));
    }
  } catch (const std::runtime_error& error) {
    log.error("rank " + std::to_string(ranks.size()) + ": " + error.what());
    return 1;  // the ranks already started are killed as `ranks` goes
  }

  std::optional<int> first_failure;
  Clock::time_point kill_time;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    bool running = false;
    for (int rank = 0; rank < nproc; ++rank) {
      if (!ranks[rank]) continue;
      const auto exit = ranks[rank]->poll();
      if (!exit) {
        running = true;
        continue;
      }
      ranks[rank].reset();
      if (exit->ok()) continue;
      const std::string what = "rank " + std::to_string(rank) + ": " + exit->describe(std::nullopt);
      if (first_failure) {
        log.error(what);
        continue;
      }
      first_failure = failure_status(*exit);
      kill_time = Clock::now() +
                  std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_seconds));
      log.error(what + ": stopping the other ranks");
    }
    if (!running) break;
    if (first_failure && Clock::now() >= kill_time) {
      for (int rank = 0; rank < nproc; ++rank) {
        if (!ranks[rank]) continue;
        log.error("rank " + std::to_string(rank) + ": still running " + seconds_text(grace_seconds) +
                  " s after the first failure: killed");
        ranks[rank].reset();
      }
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  return first_failure.value_or(0);
}

}  // namespace kbench::dist
