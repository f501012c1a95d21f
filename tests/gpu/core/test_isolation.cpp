// --isolate on the GPU: a testlist whose cases trap, store through a wild pointer, hang past
// --case_timeout and abort the host process, between cases that work. Each bad case ends as an
// [ERROR] of its own; the good cases before and after run, refcheck and keep their CSV rows.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/csv.hpp"
#include "gpu_test_support.hpp"
#include "run_command.hpp"

namespace kbench {
namespace {

std::string fresh_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kbench_isolation_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Isolation, FaultingCasesFailAloneAndTheTestlistGoesOn) {
  KBENCH_REQUIRE_GPU();
  const std::string testlist = fresh_path("faults.txt");
  const std::string csv = fresh_path("faults.csv");
  std::ofstream(testlist) << "--routine fault_probe --backends ok --size 1000 --refcheck\n"
                             "--routine fault_probe --backends trap\n"
                             "--routine fault_probe --backends illegal_address --refcheck\n"
                             "--routine fault_probe --backends hang\n"
                             "--routine fault_probe --backends abort\n"
                             "--routine fault_probe --backends ok --size 333 --refcheck\n"
                             "--routine rmsnorm --batch_size 7 --hidden_size 520 --refcheck\n";
  const auto start = std::chrono::steady_clock::now();
  const auto r = testing::run_command(std::string(KBENCH_FAULT_PROBE_BINARY) + " --testlist " + testlist +
                                      " --isolate --case_timeout 4 --output_path " + csv);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_status, 1) << r.output;
  EXPECT_LT(seconds, 60.0) << "the hanging case was not killed at its limit";
  EXPECT_EQ(count(r.output, "[ERROR] Error running test: "), 4u) << r.output;
  for (const char* line : {"--backends trap", "--backends illegal_address --refcheck", "--backends hang",
                           "--backends abort"}) {
    EXPECT_NE(r.output.find(std::string("[ERROR] Error running test: --routine fault_probe ") + line), std::string::npos)
        << line << "\n" << r.output;
  }
  EXPECT_NE(r.output.find("line 4: the case's process ended with a kill after its 4 s limit before reporting its outcome"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("line 5: the case's process ended with signal 6"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Testlist summary: 7 cases: 3 passed, 4 failed, 0 skipped"), std::string::npos) << r.output;
  // The trap and the wild store are CUDA errors the child itself reports, per backend.
  EXPECT_NE(r.output.find("line 2 fault_probe: trap failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("line 3 fault_probe: illegal_address failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("line 6 fault_probe: ok passed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("line 7 rmsnorm: cuda passed"), std::string::npos) << r.output;

  // One header, then the rows of the three good cases, each whole.
  std::ifstream in(csv);
  std::string header;
  ASSERT_TRUE(std::getline(in, header));
  const auto columns = parse_csv_line(header);
  const auto backend = std::find(columns.begin(), columns.end(), "backend") - columns.begin();
  const auto status = std::find(columns.begin(), columns.end(), "refcheck_status") - columns.begin();
  std::vector<std::string> backends;
  std::string line;
  while (std::getline(in, line)) {
    const auto fields = parse_csv_line(line);
    ASSERT_EQ(fields.size(), columns.size()) << line;
    backends.push_back(fields[backend]);
    EXPECT_EQ(fields[status], "passed") << line;
  }
  EXPECT_EQ(backends, (std::vector<std::string>{"ok", "ok", "cuda"}));
}

TEST(Isolation, OneCommandWithASweepRunsEachCaseInItsOwnProcess) {
  KBENCH_REQUIRE_GPU();
  const auto r = testing::run_command(std::string(KBENCH_FAULT_PROBE_BINARY) +
                                      " --routine fault_probe --backends ok --size 100 200 --refcheck --isolate");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_EQ(count(r.output, "[PERF] ok"), 2u) << r.output;
  EXPECT_EQ(count(r.output, "[INFO] Backends: "), 1u) << "one summary, the parent's\n" << r.output;
}

}  // namespace
}  // namespace kbench
