// --json without a GPU: a measured result built by hand (the rmsnorm case is built, not allocated),
// the cases with their dispositions, and the document on disk.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/cli.hpp"
#include "core/json_report.hpp"
#include "core/shell_words.hpp"
#include "routines/builtin_routines.hpp"

namespace kbench {
namespace {

TEST(JsonValue, CellsBecomeTypedValues) {
  EXPECT_EQ(json_value("0.0123"), 0.0123);
  EXPECT_EQ(json_value("42"), 42.0);
  EXPECT_EQ(json_value("True"), true);
  EXPECT_EQ(json_value("False"), false);
  EXPECT_TRUE(json_value("").is_null());
  EXPECT_EQ(json_value("bfloat16"), "bfloat16");
  EXPECT_EQ(json_value("1e"), "1e");
  EXPECT_EQ(json_value(" 1"), " 1");
  EXPECT_EQ(json_value("nan"), "nan");
}

TEST(JsonReport, ResultsAndCasesWithEveryDisposition) {
  const auto path = (std::filesystem::temp_directory_path() / ("kbench_json_" + std::to_string(::getpid()) + ".json")).string();
  std::filesystem::remove(path);
  const RoutineRegistry registry = make_builtin_registry();
  const CaseArgs args = parse_case(
      split_shell_words("--routine rmsnorm --batch_size 4 --hidden_size 256 --backends cuda flashinfer --json " + path +
                        " --json_samples --case_tag 'a, b'"),
      registry);
  const Routine& routine = *registry.find("rmsnorm");
  const auto problem = routine.make_case(args);
  TimingResult timed;
  timed.samples_ms = {0.010, 0.011, 0.012};
  timed.stats = summarize(timed.samples_ms);
  timed.conditions = summarize_conditions({{1455, 2619, 690, 55, kClockLimitPowerCap}});
  timed.conditions.sm_clock_max_mhz = 1980;
  DeviceInfo device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.cc_major = 9;
  JsonReporter json(device);
  json.report({args, routine, *problem, "cuda", "cuda", "cuda", timed, 0.1, 0.2, "passed", "kbench ...", std::nullopt});
  json.record_case("rmsnorm", args,
                   {CaseStatus::passed, "", {{"cuda", Disposition::passed, ""},
                                             {"flashinfer", Disposition::not_supported, "not built with FlashInfer"}}});

  std::ifstream in(path);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["kbench"]["gpu_name"], "NVIDIA_H100_80GB_HBM3");
  ASSERT_EQ(doc["results"].size(), 1u);
  const auto& row = doc["results"][0];
  EXPECT_EQ(row["routine"], "rmsnorm");
  EXPECT_EQ(row["backend"], "cuda");
  EXPECT_DOUBLE_EQ(row["median_time"].get<double>(), 0.011);
  EXPECT_EQ(row["batch_size"], 4.0);
  EXPECT_EQ(row["case_tag"], "a, b");
  EXPECT_EQ(row["refcheck_status"], "passed");
  EXPECT_EQ(row["num_samples"], 3.0);
  EXPECT_GT(row["noise"].get<double>(), 0.0);
  EXPECT_EQ(row["sm_clock_mhz"], 1455.0);
  EXPECT_EQ(row["sm_clock_max_mhz"], 1980.0);
  EXPECT_EQ(row["throttle_reasons"], "sw_power_cap");
  EXPECT_EQ(row["samples_ms"].size(), 3u);
  ASSERT_EQ(doc["cases"].size(), 1u);
  const auto& c = doc["cases"][0];
  EXPECT_EQ(c["status"], "passed");
  EXPECT_EQ(c["args"]["hidden_size"], 256);
  ASSERT_EQ(c["backends"].size(), 2u);
  EXPECT_EQ(c["backends"][1]["backend"], "flashinfer");
  EXPECT_EQ(c["backends"][1]["disposition"], "not_supported");
  EXPECT_EQ(c["backends"][1]["reason"], "not built with FlashInfer");
  std::filesystem::remove(path);
}

TEST(ClockWarning, NamesTheCapOrStaysQuiet) {
  GpuConditions c = summarize_conditions({{1455, 2619, 690, 55, kClockLimitPowerCap}});
  c.sm_clock_max_mhz = 1980;
  c.power_limit_w = 700;
  const std::string warning = clock_warning("fa3", c);
  EXPECT_NE(warning.find("fa3: the SM clock ran at 1455 MHz (median; 73% of its 1980 MHz maximum"), std::string::npos)
      << warning;
  EXPECT_NE(warning.find("held by: sw_power_cap"), std::string::npos) << warning;
  GpuConditions full = summarize_conditions({{1980, 2619, 400, 50, kClockLimitIdle}});
  full.sm_clock_max_mhz = 1980;
  EXPECT_EQ(clock_warning("cuda", full), "");
  EXPECT_EQ(clock_warning("cuda", GpuConditions{}), "");
  // A cap seen in one sample of a run at full clock held nothing back (seen on the H100: a median
  // of 1980 MHz with sw_power_cap in a sample); 5% below the maximum under the cap did.
  GpuConditions brief = summarize_conditions({{1980, 2619, 206, 40, kClockLimitPowerCap}, {1620, 2619, 206, 40, 0},
                                              {1980, 2619, 206, 40, 0}});
  brief.sm_clock_max_mhz = 1980;
  EXPECT_EQ(clock_warning("fa3", brief), "");
  GpuConditions held = summarize_conditions({{1880, 2619, 699, 60, kClockLimitPowerCap}});
  held.sm_clock_max_mhz = 1980;
  EXPECT_NE(clock_warning("fa3", held).find("held by: sw_power_cap"), std::string::npos);
  // Slow with no cap named: still a warning.
  GpuConditions slow = summarize_conditions({{1200, 2619, 300, 60, 0}});
  slow.sm_clock_max_mhz = 1980;
  EXPECT_NE(clock_warning("cuda", slow).find("held by: no cap NVML names"), std::string::npos);
}

}  // namespace
}  // namespace kbench
