// kbench's own launcher (--nproc) with /bin/sh as the rank program: statuses, the KBENCH_*
// variables, and the other ranks stopped after one fails; then this test binary itself as the ranks,
// meeting at the rendezvous as kbench's ranks do.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "core/child_process.hpp"
#include "dist/launcher.hpp"
#include "dist/rank_environment.hpp"
#include "dist/rendezvous.hpp"

namespace kbench::dist {
namespace {

// Sets an environment variable for one test's length.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name), old_(process_getenv(name)) {
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedVariable() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

struct Launch {
  int status = -1;
  std::string errors;
  double seconds = 0;
};

Launch launch_shell(int nproc, const std::string& script) {
  std::ostringstream err;
  const auto start = std::chrono::steady_clock::now();
  Launch launch;
  launch.status = launch_local(nproc, "/bin/sh", {"-c", script}, err);
  launch.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  launch.errors = err.str();
  return launch;
}

TEST(LaunchLocal, EveryRankExitingZeroIsZero) {
  const Launch launch = launch_shell(3, "exit 0");
  EXPECT_EQ(launch.status, 0);
  EXPECT_EQ(launch.errors, "");
}

TEST(LaunchLocal, RanksSeeTheirVariables) {
  const ScopedVariable nvls("NCCL_NVLS_ENABLE", nullptr);
  const auto folder = std::filesystem::path(::testing::TempDir()) / "kbench_launch_ranks";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  const Launch launch = launch_shell(
      3, "test \"$KBENCH_RANK\" -lt \"$KBENCH_WORLD_SIZE\" && test \"$KBENCH_WORLD_SIZE\" = 3 && "
         "test \"$KBENCH_LOCAL_RANK\" = \"$KBENCH_RANK\" && test \"$KBENCH_LOCAL_SIZE\" = 3 && "
         "test \"$KBENCH_MASTER_ADDR\" = 127.0.0.1 && test \"$KBENCH_MASTER_PORT\" -gt 0 && "
         "test \"$NCCL_NVLS_ENABLE\" = 0 && echo \"$KBENCH_MASTER_PORT\" > " +
             folder.string() + "/rank$KBENCH_RANK");
  EXPECT_EQ(launch.status, 0) << launch.errors;
  std::set<std::string> ports;
  for (int rank = 0; rank < 3; ++rank) {
    std::ifstream file(folder / ("rank" + std::to_string(rank)));
    std::string port;
    EXPECT_TRUE(std::getline(file, port)) << "rank " << rank << " did not run";
    ports.insert(port);
  }
  EXPECT_EQ(ports.size(), 1u) << "every rank meets at one port";
  std::filesystem::remove_all(folder);
}

TEST(LaunchLocal, AUsersNvlsSettingIsKept) {
  const ScopedVariable nvls("NCCL_NVLS_ENABLE", "1");
  EXPECT_EQ(launch_shell(2, "test \"$NCCL_NVLS_ENABLE\" = 1").status, 0);
}

TEST(LaunchLocal, AFailedRankStopsTheOthers) {
  const ScopedVariable grace("KBENCH_DIST_TIMEOUT", "0.3");
  const Launch launch = launch_shell(3, "if [ \"$KBENCH_RANK\" = 1 ]; then exit 3; fi; exec sleep 30");
  EXPECT_EQ(launch.status, 3);
  EXPECT_LT(launch.seconds, 10.0) << "the sleeping ranks are killed after the grace period";
  EXPECT_NE(launch.errors.find("[ERROR] rank 1: exit status 3: stopping the other ranks\n"), std::string::npos)
      << launch.errors;
  EXPECT_NE(launch.errors.find("[ERROR] rank 0: still running 0.3 s after the first failure: killed\n"),
            std::string::npos)
      << launch.errors;
  EXPECT_NE(launch.errors.find("[ERROR] rank 2: still running 0.3 s after the first failure: killed\n"),
            std::string::npos)
      << launch.errors;
}

TEST(LaunchLocal, RanksEndingInTheGracePeriodAreNotKilled) {
  const ScopedVariable grace("KBENCH_DIST_TIMEOUT", "20");
  const Launch launch = launch_shell(2, "if [ \"$KBENCH_RANK\" = 0 ]; then exit 4; fi; sleep 0.2; exit 1");
  EXPECT_EQ(launch.status, 4) << "the first failure's status";
  EXPECT_LT(launch.seconds, 10.0);
  EXPECT_NE(launch.errors.find("[ERROR] rank 0: exit status 4: stopping the other ranks\n"), std::string::npos);
  EXPECT_NE(launch.errors.find("[ERROR] rank 1: exit status 1\n"), std::string::npos) << launch.errors;
  EXPECT_EQ(launch.errors.find("killed"), std::string::npos) << launch.errors;
}

TEST(LaunchLocal, ASignalIsStatusOne) {
  const ScopedVariable grace("KBENCH_DIST_TIMEOUT", "0.3");
  const Launch launch = launch_shell(2, "if [ \"$KBENCH_RANK\" = 1 ]; then kill -TERM $$; fi; exec sleep 30");
  EXPECT_EQ(launch.status, 1);
  EXPECT_NE(launch.errors.find("[ERROR] rank 1: signal 15 ("), std::string::npos) << launch.errors;
}

TEST(LaunchLocal, BadArgumentsAreUsageErrors) {
  std::ostringstream err;
  EXPECT_EQ(launch_local(0, "/bin/sh", {"-c", "exit 0"}, err), 2);
  EXPECT_EQ(err.str(), "[ERROR] --nproc 0: at least 1 process\n");
  const ScopedVariable grace("KBENCH_DIST_TIMEOUT", "-1");
  std::ostringstream timeout_err;
  EXPECT_EQ(launch_local(2, "/bin/sh", {"-c", "exit 0"}, timeout_err), 2);
  EXPECT_EQ(timeout_err.str(), "[ERROR] KBENCH_DIST_TIMEOUT=-1 is not a positive number of seconds\n");
}

TEST(LaunchLocal, AProgramThatCannotStartFails) {
  std::ostringstream err;
  EXPECT_EQ(launch_local(2, "/nonexistent/kbench", {}, err), 1);
  EXPECT_NE(err.str().find("[ERROR] rank 0: cannot start '/nonexistent/kbench'"), std::string::npos) << err.str();
}

// What each rank of RanksMeetAtTheRendezvous runs; skipped when the test binary runs on its own.
TEST(LaunchedRank, MeetsTheOthers) {
  if (!process_getenv("KBENCH_RANK")) GTEST_SKIP() << "a rank of LaunchLocal.RanksMeetAtTheRendezvous";
  const RankEnvironment env = discover_ranks(process_getenv);
  EXPECT_EQ(env.launcher, "kbench");
  EXPECT_EQ(env.size, 3);
  const std::string sent = "from rank 0";
  const auto payload = rendezvous(env, rendezvous_options(env, process_getenv),
                                  env.rank == 0 ? std::as_bytes(std::span(sent)) : std::span<const std::byte>(),
                                  command_digest(std::vector<std::string>{"same", "command"}));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(payload.data()), payload.size()), sent);
}

TEST(LaunchLocal, RanksMeetAtTheRendezvous) {
  const ScopedVariable timeout("KBENCH_DIST_TIMEOUT", "20");
  std::ostringstream err;
  EXPECT_EQ(launch_local(3, self_executable(), {"--gtest_filter=LaunchedRank.MeetsTheOthers", "--gtest_brief=1"}, err),
            0)
      << err.str();
}

}  // namespace
}  // namespace kbench::dist
