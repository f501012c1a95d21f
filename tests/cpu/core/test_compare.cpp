// kbench compare: two recorded runs with planted changes, written by kbench's own CSV writer (and as
// JSON), judged by the library and by the binary (its exit status is a CI gate).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <regex>
#include <nlohmann/json.hpp>

#include "core/compare.hpp"
#include "core/csv.hpp"
#include "core/usage_error.hpp"
#include "routines/builtin_routines.hpp"
#include "run_command.hpp"

namespace kbench {
namespace {

using testing::run_kbench;

constexpr const char* kDecode = "BatchDecodeWithPagedKVCacheWrapper";

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kbench_compare_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

// A decode row as kbench writes it: `relative_std` is std_time / median_time.
CsvRow decode_row(const std::string& backend, int batch_size, double median_ms, double relative_std,
                  int num_samples = 30) {
  const double std_ms = relative_std * median_ms;
  return {{"routine", kDecode},
          {"backend", backend},
          {"resolved_backend", backend},
          {"median_time", std::to_string(median_ms)},
          {"std_time", std::to_string(std_ms)},
          {"min_time", std::to_string(median_ms - 2 * std_ms)},
          {"max_time", std::to_string(median_ms + 2 * std_ms)},
          {"num_samples", std::to_string(num_samples)},
          {"batch_size", std::to_string(batch_size)},
          {"s_kv", "8192"},
          {"page_size", "16"},
          {"q_dtype", "bfloat16"},
          {"kv_layout", "HND"},
          {"random_seed", "42"},
          {"timer", "cupti"},
          {"gpu_name", "NVIDIA_H100_80GB_HBM3"},
          {"case_tag", "decode"}};
}

std::string write_csv(const std::string& name, const std::vector<CsvRow>& rows,
                      std::vector<std::string> extra_columns = {}) {
  const std::string path = temp_path(name);
  std::vector<std::string> columns = csv_columns(make_builtin_registry());
  columns.insert(columns.end(), extra_columns.begin(), extra_columns.end());
  CsvWriter writer(path, columns);
  for (const CsvRow& row : rows) writer.write_row(row);
  return path;
}

std::vector<CaseComparison> compare_files(const std::string& base, const std::string& next,
                                          const CompareOptions& options = {}) {
  // The comparisons point into the files: keep them alive for the test.
  static std::vector<std::unique_ptr<ResultFile>> files;
  files.push_back(std::make_unique<ResultFile>(read_result_file(base)));
  const ResultFile& base_file = *files.back();
  files.push_back(std::make_unique<ResultFile>(read_result_file(next)));
  return compare_results(base_file, *files.back(), options);
}

Verdict only_verdict(const std::vector<CaseComparison>& comparisons) {
  EXPECT_EQ(comparisons.size(), 1u);
  return comparisons.empty() ? Verdict::same : comparisons.front().verdict;
}

TEST(Compare, TenPercentSlowerWithLowNoiseIsSlowAndFailsTheGate) {
  const auto base = write_csv("slow_base.csv", {decode_row("fa2", 16, 0.2000, 0.002)});
  const auto next = write_csv("slow_new.csv", {decode_row("fa2", 16, 0.2200, 0.002)});
  const auto comparisons = compare_files(base, next);
  EXPECT_EQ(only_verdict(comparisons), Verdict::slow);
  EXPECT_NEAR(comparisons.front().change, 0.10, 1e-9);
  EXPECT_EQ(compare_exit_status(comparisons, FailOn::slow), kExitRegression);

  const auto r = run_kbench("compare " + base + " " + next);
  EXPECT_EQ(r.exit_status, 1) << r.output;
  EXPECT_NE(r.output.find("SLOW"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("+10.00%"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 cases in both: 1 SLOW, 0 FAST, 0 SAME, 0 NOISY; 0 ADDED, 0 REMOVED"), std::string::npos)
      << r.output;
  // Run against itself: nothing changed.
  EXPECT_EQ(run_kbench("compare " + base + " " + base).exit_status, 0);
}

TEST(Compare, TenPercentWithTwentyPercentNoiseIsNoisy) {
  // Recorded as the median's noise...
  CsvRow noisy_base = decode_row("fa2", 16, 0.2000, 0.002);
  CsvRow noisy_next = decode_row("fa2", 16, 0.2200, 0.002);
  noisy_next["noise"] = "0.2";
  const auto base = write_csv("noisy_base.csv", {noisy_base}, {"noise"});
  const auto next = write_csv("noisy_new.csv", {noisy_next}, {"noise"});
  const auto comparisons = compare_files(base, next);
  EXPECT_EQ(only_verdict(comparisons), Verdict::noisy);
  EXPECT_NE(comparisons.front().note.find("NEW noise 20.00% > 5.00%"), std::string::npos) << comparisons.front().note;
  const auto r = run_kbench("compare " + base + " " + next);
  EXPECT_EQ(r.exit_status, 0) << r.output;  // NOISY fails only --fail_on any
  EXPECT_EQ(run_kbench("compare " + base + " " + next + " --fail_on any").exit_status, 1);

  // ... or as the samples' spread: std 20% of the median over 4 samples, 12.5% for the median.
  const auto spread_base = write_csv("spread_base.csv", {decode_row("fa2", 16, 0.2000, 0.20, 4)});
  const auto spread_next = write_csv("spread_new.csv", {decode_row("fa2", 16, 0.2200, 0.20, 4)});
  EXPECT_EQ(only_verdict(compare_files(spread_base, spread_next)), Verdict::noisy);
}

TEST(Compare, TinyChangeIsSameEvenWhenSignificant) {
  // 0.3% with a standard error of 0.002%: significant, below the 1% floor.
  const auto base = write_csv("same_base.csv", {decode_row("fa2", 16, 0.2000, 0.0001)});
  const auto next = write_csv("same_new.csv", {decode_row("fa2", 16, 0.2006, 0.0001)});
  const auto comparisons = compare_files(base, next);
  EXPECT_EQ(only_verdict(comparisons), Verdict::same);
  EXPECT_DOUBLE_EQ(comparisons.front().threshold, 0.01);
  CompareOptions no_floor;
  no_floor.min_change = 0.0;
  EXPECT_EQ(only_verdict(compare_files(base, next, no_floor)), Verdict::slow);
  EXPECT_EQ(run_kbench("compare " + base + " " + next + " --min_change 0").exit_status, 1);
}

TEST(Compare, SpeedupIsFastAndPassesTheGate) {
  const auto base = write_csv("fast_base.csv", {decode_row("fa2_tc", 64, 0.7600, 0.003)});
  const auto next = write_csv("fast_new.csv", {decode_row("fa2_tc", 64, 0.7000, 0.003)});
  EXPECT_EQ(only_verdict(compare_files(base, next)), Verdict::fast);
  const auto r = run_kbench("compare " + base + " " + next);
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("FAST"), std::string::npos) << r.output;
}

TEST(Compare, ThresholdComesFromBothRunsNoise) {
  // std 5% of the median over 100 samples: u = 1.2533 * 0.05 / 10 = 0.627% per run, 3 sigma of the
  // ratio = 3 * sqrt(2) * 0.627% = 2.66%: 2% is within noise, 4% is not.
  const double u = 1.2533 * 0.05 / 10.0;
  const auto base = write_csv("sigma_base.csv", {decode_row("fa2", 16, 1.0, 0.05, 100), decode_row("fa2", 32, 1.0, 0.05, 100)});
  const auto next = write_csv("sigma_new.csv", {decode_row("fa2", 16, 1.02, 0.05, 100),
                                                decode_row("fa2", 32, 1.04, 0.05, 100)});
  const auto comparisons = compare_files(base, next);
  ASSERT_EQ(comparisons.size(), 2u);
  EXPECT_NEAR(comparisons[0].threshold, 3.0 * std::sqrt(2.0) * u, 1e-6);
  EXPECT_EQ(comparisons[0].verdict, Verdict::same);
  EXPECT_EQ(comparisons[1].verdict, Verdict::slow);
  CompareOptions five_sigma;
  five_sigma.threshold_sigma = 5.0;  // 4.43%: both within noise
  for (const auto& c : compare_files(base, next, five_sigma)) EXPECT_EQ(c.verdict, Verdict::same);
}

TEST(Compare, CasesMatchByConfigurationNotByRunRecords) {
  CsvRow base_row = decode_row("fa2", 16, 0.2, 0.001);
  CsvRow next_row = decode_row("fa2", 16, 0.2, 0.001);
  next_row["case_tag"] = "renamed";
  next_row["repro_command"] = "kbench --routine BatchDecodeWithPagedKVCacheWrapper";
  next_row["gpu_name"] = "NVIDIA_H200";
  next_row["timer"] = "cuda_events";
  base_row["sm_clock_mhz"] = "1575";
  next_row["sm_clock_mhz"] = "1500";
  base_row["temperature_c"] = "47";
  next_row["temperature_c"] = "52";
  base_row["throttle_reasons"] = "none";
  next_row["throttle_reasons"] = "sw_power_cap";
  const auto base = write_csv("records_base.csv", {base_row});
  const auto next = write_csv("records_new.csv", {next_row});
  const auto comparisons = compare_files(base, next);
  EXPECT_EQ(only_verdict(comparisons), Verdict::same);
  EXPECT_EQ(comparisons.front().note, "timer cupti -> cuda_events; SM clock 1575 -> 1500 MHz (-4.8%)");
  const auto r = run_kbench("compare " + base + " " + next);
  EXPECT_NE(r.output.find("[WARNING] compare: the runs are from different GPUs"), std::string::npos) << r.output;

  EXPECT_TRUE(is_configuration_column("s_kv"));
  EXPECT_TRUE(is_configuration_column("no_cuda_graph"));
  for (const char* record : {"median_time", "noise", "repro_command", "gpu_name", "sm_clock_mhz", "power_draw_w",
                             "temperature_c", "throttle_reasons", "mean_time", "json"}) {
    EXPECT_FALSE(is_configuration_column(record)) << record;
  }
}

TEST(Compare, ThePlotReportLeavesTheSameColumnsOutOfACase) {
  std::ifstream in(std::string(KBENCH_SOURCE_DIR) + "/scripts/plot_report.py");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto start = text.find("NOT_CONFIGURATION = {");
  ASSERT_NE(start, std::string::npos);
  const std::string block = text.substr(start, text.find('}', start) - start);
  std::set<std::string, std::less<>> python;
  const std::regex quoted("\"([a-z0-9_]+)\"");
  for (std::sregex_iterator it(block.begin(), block.end(), quoted), end; it != end; ++it) python.insert((*it)[1]);
  EXPECT_EQ(python, run_record_columns());
}

TEST(Compare, RowsInOneFileAreAddedOrRemoved) {
  const auto base = write_csv("one_base.csv", {decode_row("fa2", 16, 0.2, 0.001), decode_row("fa2", 32, 0.3, 0.001)});
  const auto next = write_csv("one_new.csv", {decode_row("fa2", 32, 0.3, 0.001), decode_row("fa2_tc", 32, 0.25, 0.001)});
  const auto comparisons = compare_files(base, next);
  ASSERT_EQ(comparisons.size(), 3u);
  EXPECT_EQ(comparisons[0].verdict, Verdict::removed);
  EXPECT_EQ(comparisons[0].base->backend, "fa2");
  EXPECT_EQ(comparisons[1].verdict, Verdict::same);
  EXPECT_EQ(comparisons[2].verdict, Verdict::added);
  EXPECT_EQ(comparisons[2].next->backend, "fa2_tc");
  const auto r = run_kbench("compare " + base + " " + next);
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("1 ADDED, 1 REMOVED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("batch_size=16"), std::string::npos) << r.output;  // what tells the cases apart
  EXPECT_EQ(run_kbench("compare " + base + " " + next + " --fail_on any").exit_status, 1);
}

TEST(Compare, ALaterRowOfTheSameCaseReplacesAnEarlierOne) {
  const auto base = write_csv("dup_base.csv", {decode_row("fa2", 16, 0.2, 0.001)});
  const auto next = write_csv("dup_new.csv", {decode_row("fa2", 16, 0.3, 0.001), decode_row("fa2", 16, 0.2, 0.001)});
  EXPECT_EQ(only_verdict(compare_files(base, next)), Verdict::same);
}

TEST(Compare, ReadsJsonResults) {
  const auto base = write_csv("json_base.csv", {decode_row("fa2", 16, 0.2, 0.002), decode_row("fa2_tc", 16, 0.2, 0.002),
                                                decode_row("cudnn", 16, 0.2, 0.002)});
  // The same cases as JSON values (numbers, not text), NEW 10% slower on fa2; fa2_tc without
  // std_time (its spread from min and max); cudnn failed in NEW.
  const auto json_row = [](const std::string& backend, double median_ms) {
    return nlohmann::json{{"routine", kDecode}, {"backend", backend}, {"median_time", median_ms},
                          {"std_time", 0.002 * median_ms}, {"num_samples", 30}, {"batch_size", 16},
                          {"s_kv", 8192.0}, {"page_size", 16}, {"q_dtype", "bfloat16"}, {"kv_layout", "HND"},
                          {"random_seed", 42}, {"refcheck", true}, {"samples_ms", {median_ms, median_ms}}};
  };
  nlohmann::json fa2_tc = json_row("fa2_tc", 0.2);
  fa2_tc.erase("std_time");
  fa2_tc["min_time"] = 0.199;
  fa2_tc["max_time"] = 0.201;
  nlohmann::json cudnn = json_row("cudnn", 0.2);
  cudnn["median_time"] = nullptr;
  cudnn["disposition"] = "failed";
  cudnn["reason"] = "CUDNN_STATUS_EXECUTION_FAILED";
  const nlohmann::json document = {{"kbench", {{"version", "0.1.0"}}},
                                   {"results", {json_row("fa2", 0.22), fa2_tc, cudnn}}};
  const std::string next = temp_path("json_new.json");
  std::ofstream(next) << document.dump(2);

  const auto comparisons = compare_files(base, next);
  ASSERT_EQ(comparisons.size(), 3u);
  EXPECT_EQ(comparisons[0].verdict, Verdict::slow);
  EXPECT_EQ(comparisons[1].verdict, Verdict::same);
  ASSERT_TRUE(comparisons[1].next->relative_error.has_value());
  EXPECT_NEAR(*comparisons[1].next->relative_error, 1.2533 * (0.002 / 4) / std::sqrt(30.0) / 0.2, 1e-9);
  EXPECT_EQ(comparisons[2].verdict, Verdict::removed);
  EXPECT_EQ(comparisons[2].note, "not measured in NEW: failed: CUDNN_STATUS_EXECUTION_FAILED");
  EXPECT_EQ(run_kbench("compare " + base + " " + next).exit_status, 1);
  EXPECT_EQ(run_kbench("compare " + next + " " + next).exit_status, 0);
}

TEST(Compare, UsageErrorsExitTwo) {
  const auto good = write_csv("usage_good.csv", {decode_row("fa2", 16, 0.2, 0.001)});
  const std::string reference_csv = temp_path("reference.csv");
  std::ofstream(reference_csv) << "routine,median_time,std_time,tflops,tb_per_sec,backend\nrmsnorm,0.1,0.001,1,2,cuda\n";
  const std::string not_json = temp_path("broken.json");
  std::ofstream(not_json) << "{\"kbench\": {}, \"results\": [";
  const std::string other_json = temp_path("other.json");
  std::ofstream(other_json) << "{\"rows\": []}";
  const struct {
    std::string arguments;
    std::string message;
  } cases[] = {
      {"/nonexistent/base.csv " + good, "cannot read '/nonexistent/base.csv'"},
      {reference_csv + " " + good, "no 'num_samples' or 'noise' column"},
      {good + " " + not_json, "not JSON"},
      {good + " " + other_json, "is not a kbench result file"},
      {good, "needs two result files"},
      {good + " " + good + " --fail_on never", "--fail_on"},
      {good + " " + good + " --threshold_sigma -1", "--threshold_sigma"},
      {good + " " + good + " --frobnicate", "frobnicate"},
  };
  for (const auto& c : cases) {
    const auto r = run_kbench("compare " + c.arguments);
    EXPECT_EQ(r.exit_status, 2) << c.arguments << "\n" << r.output;
    EXPECT_NE(r.output.find("[ERROR]"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.arguments << "\n" << r.output;
  }
  EXPECT_THROW((void)read_result_file(reference_csv), UsageError);
  const auto help = run_kbench("compare --help");
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_NE(help.output.find("threshold = max(K * sqrt(u_base^2 + u_new^2), min_change)"), std::string::npos);
}

}  // namespace
}  // namespace kbench
