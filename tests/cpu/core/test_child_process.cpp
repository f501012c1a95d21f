// The process boundary of --isolate: exit statuses, signals, the time limit, the environment.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iterator>

#include "core/child_process.hpp"
#include "core/outcome.hpp"

namespace kbench {
namespace {

ChildExit shell(const std::string& script, std::optional<double> timeout = std::nullopt,
                std::vector<std::pair<std::string, std::string>> environment = {}) {
  return run_child({"/bin/sh", {"-c", script}, std::move(environment), std::nullopt, timeout});
}

TEST(ChildProcess, ExitStatusComesBack) {
  EXPECT_TRUE(shell("exit 0").ok());
  const ChildExit e = shell("exit 3");
  EXPECT_EQ(e.how, ChildExit::How::exited);
  EXPECT_EQ(e.code, 3);
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.describe(std::nullopt), "exit status 3");
}

TEST(ChildProcess, ASignalIsNamed) {
  const ChildExit e = shell("kill -SEGV $$");
  EXPECT_EQ(e.how, ChildExit::How::signalled);
  EXPECT_EQ(e.code, SIGSEGV);
  EXPECT_EQ(e.describe(std::nullopt).rfind("signal 11 (", 0), 0u) << e.describe(std::nullopt);
}

TEST(ChildProcess, AHangIsKilledAtItsLimit) {
  const auto start = std::chrono::steady_clock::now();
  const ChildExit e = shell("exec sleep 30", 0.3);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(e.how, ChildExit::How::timed_out);
  EXPECT_GE(seconds, 0.3);
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(e.describe(0.3), "a kill after its 0.3 s limit");
  EXPECT_EQ(shell("exec sleep 30", 2).describe(2), "a kill after its 2 s limit");
}

TEST(ChildProcess, AQuickChildIsNotKilled) { EXPECT_TRUE(shell("exit 0", 10.0).ok()); }

TEST(ChildProcess, EnvironmentIsAddedAndReplaced) {
  ::setenv("KBENCH_TEST_REPLACED", "old", 1);
  EXPECT_TRUE(shell("test \"$KBENCH_TEST_ADDED\" = yes && test \"$KBENCH_TEST_REPLACED\" = new", std::nullopt,
                    {{"KBENCH_TEST_ADDED", "yes"}, {"KBENCH_TEST_REPLACED", "new"}})
                  .ok());
  EXPECT_TRUE(shell("test \"$KBENCH_TEST_REPLACED\" = old").ok()) << "the parent's own environment is inherited";
}

TEST(ChildProcess, AProgramThatCannotStartThrows) {
  EXPECT_THROW((void)run_child({"/nonexistent/kbench", {}, {}, std::nullopt, std::nullopt}), std::runtime_error);
}

TEST(ChildProcess, OutputGoesToItsFile) {
  const std::string path = ::testing::TempDir() + "kbench_child_output.txt";
  EXPECT_TRUE(run_child({"/bin/sh", {"-c", "echo out; echo err >&2"}, {}, path, std::nullopt}).ok());
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "out\nerr\n");
}

TEST(ChildProcess, SeveralRunSideBySide) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<ChildProcess> children;
  for (int i = 0; i < 4; ++i) children.emplace_back(ChildSpec{"/bin/sh", {"-c", "sleep 0.5; exit " + std::to_string(i)}, {}, std::nullopt, std::nullopt});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(children[i].wait().code, i);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.9);
  ChildProcess running(ChildSpec{"/bin/sh", {"-c", "sleep 30"}, {}, std::nullopt, std::nullopt});
  EXPECT_FALSE(running.poll().has_value());  // destroying it kills it
}

TEST(CaseOutcomeJson, RoundTrips) {
  const CaseOutcome outcome{CaseStatus::failed,
                            "CUDA error: an illegal memory access, \"quoted\"\n",
                            {{"fa2", Disposition::passed, ""}, {"cudnn", Disposition::not_supported, "no engine"},
                             {"auto(fa3)", Disposition::failed, "trap"}}};
  const CaseOutcome back = parse_case_outcome(case_outcome_json(outcome));
  EXPECT_EQ(back.status, outcome.status);
  EXPECT_EQ(back.reason, outcome.reason);
  ASSERT_EQ(back.backends.size(), 3u);
  EXPECT_EQ(back.backends[1].label, "cudnn");
  EXPECT_EQ(back.backends[1].disposition, Disposition::not_supported);
  EXPECT_EQ(back.backends[2].reason, "trap");
  EXPECT_THROW((void)parse_case_outcome("{\"status\": \"pass"), std::runtime_error);
}

}  // namespace
}  // namespace kbench
