// kbench on a GPU, end to end, as a user runs it: the seed's commands (rmsnorm, decode, prefill),
// testlists with bad lines, the CSV, repro commands, timers, and cases too large for the GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "core/csv.hpp"
#include "gpu_test_support.hpp"
#include "run_command.hpp"

namespace kbench {
namespace {

using testing::run_command;
using testing::run_kbench;

std::string temp_file(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kbench_e2e_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  [[nodiscard]] std::string at(std::size_t row, const std::string& column) const {
    const auto it = std::find(header.begin(), header.end(), column);
    EXPECT_NE(it, header.end()) << column;
    return rows.at(row).at(static_cast<std::size_t>(it - header.begin()));
  }
};

Csv read_csv(const std::string& path) {
  std::ifstream in(path);
  Csv csv;
  std::string line;
  if (std::getline(in, line)) csv.header = parse_csv_line(line);
  while (std::getline(in, line)) {
    csv.rows.push_back(parse_csv_line(line));
    EXPECT_EQ(csv.rows.back().size(), csv.header.size()) << line;
  }
  return csv;
}

const std::regex kPerfLine(
    R"(\[PERF\] cuda           :: median time \d+\.\d{3} ms; std \d+\.\d{3} ms; achieved tflops \d+\.\d{3} TFLOPs/sec; achieved tb_per_sec \d+\.\d{3} TB/sec)");

TEST(EndToEnd, SeedRmsnormQuantCommandRunsUnchanged) {
  KBENCH_REQUIRE_GPU();
  const auto r = run_kbench(
      "--routine rmsnorm_quant --batch_size 32 --hidden_size 4096 --input_dtype bfloat16 --out_dtype fp8_e4m3 "
      "--scale 1.0 --refcheck -vv --generate_repro_command --case_tag \"rmsnorm_quant_fp8_e4m3\"");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, kPerfLine)) << r.output;
  EXPECT_NE(r.output.find("[INFO] Running testRmsnormQuant"), std::string::npos);
  EXPECT_NE(r.output.find("[VVERBOSE] gpu_name = '"), std::string::npos);
  EXPECT_NE(r.output.find("[VVERBOSE] input_tensor.shape = torch.Size([32, 4096])"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[VVERBOSE] out_tensor.dtype = torch.float8_e4m3fn"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("[ERROR]"), std::string::npos) << r.output;

  // The printed repro command reproduces the case.
  const std::string marker = "[INFO] To reproduce this test case, run the following command: ";
  const auto at = r.output.find(marker);
  ASSERT_NE(at, std::string::npos);
  std::string repro = r.output.substr(at + marker.size(), r.output.find('\n', at) - at - marker.size());
  ASSERT_EQ(repro.rfind("kbench ", 0), 0u) << repro;
  const auto again = run_command(std::string(KBENCH_BINARY) + repro.substr(6));
  EXPECT_EQ(again.exit_status, 0) << again.output;
  EXPECT_TRUE(std::regex_search(again.output, kPerfLine)) << again.output;
}

TEST(EndToEnd, TestlistReportsBadLinesAndRunsTheRest) {
  KBENCH_REQUIRE_GPU();
  const std::string list = temp_file("list.txt");
  const std::string csv_path = temp_file("results.csv");
  std::ofstream(list) << "# comment\n"
                         "--routine rmsnorm --batch_size 33 --hidden_size 1000 --refcheck --case_tag \"tag, with comma\"\n"
                         "--routine no_such_routine --batch_size 1\n"
                         "--routine rmsnorm --batch_size 0 --hidden_size 8\n"
                         "--routine rmsnorm --batch_size 1 --hidden_size 8 --case_tag 'unterminated\n"
                         "--routine rmsnorm --batch_size 4 --hidden_size 64 --backends cute-dsl\n"
                         "\n"
                         "--routine fused_add_rmsnorm_quant --batch_size 7 --hidden_size 4099 --out_dtype fp8_e5m2 --refcheck --backends cuda cute-dsl\n";
  const auto r = run_kbench("--testlist " + list + " --output_path " + csv_path + " --generate_repro_command");
  EXPECT_EQ(r.exit_status, 1) << r.output;
  EXPECT_NE(r.output.find("[ERROR] Error running test: --routine no_such_routine --batch_size 1"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("[ERROR] Error running test: --routine rmsnorm --batch_size 0 --hidden_size 8"),
            std::string::npos);
  EXPECT_NE(r.output.find("--batch_size must be positive, got 0"), std::string::npos);
  EXPECT_NE(r.output.find("unterminated single quote"), std::string::npos);
  EXPECT_NE(r.output.find("[WARNING] cute-dsl for routine rmsnorm is not supported on compute capability"),
            std::string::npos);
  EXPECT_NE(r.output.find("Skipping."), std::string::npos);
  EXPECT_NE(r.output.find("[INFO] Testlist summary: 6 cases: 2 passed, 3 failed, 1 skipped"), std::string::npos) << r.output;

  const Csv csv = read_csv(csv_path);
  ASSERT_EQ(csv.rows.size(), 2u);
  EXPECT_EQ(csv.at(0, "routine"), "rmsnorm");
  EXPECT_EQ(csv.at(0, "case_tag"), "tag, with comma");
  EXPECT_EQ(csv.at(0, "batch_size"), "33");
  EXPECT_EQ(csv.at(0, "refcheck_status"), "passed");
  EXPECT_EQ(csv.at(0, "timer"), "cupti");
  EXPECT_EQ(csv.at(0, "use_cupti"), "True");
  EXPECT_EQ(csv.at(0, "calls_per_graph"), "10");
  EXPECT_EQ(csv.at(0, "num_samples"), "30");
  EXPECT_GT(std::stod(csv.at(0, "median_time")), 0.0);
  EXPECT_LE(std::stod(csv.at(0, "min_time")), std::stod(csv.at(0, "median_time")));
  EXPECT_GE(std::stod(csv.at(0, "max_time")), std::stod(csv.at(0, "median_time")));
  EXPECT_EQ(csv.at(1, "routine"), "fused_add_rmsnorm_quant");
  EXPECT_EQ(csv.at(1, "out_dtype"), "fp8_e5m2");
  EXPECT_EQ(csv.at(1, "refcheck_status"), "passed");
  // The repro command in the CSV is the case's own, and it parses.
  const std::string repro = csv.at(1, "repro_command");
  EXPECT_NE(repro.find("--routine fused_add_rmsnorm_quant"), std::string::npos) << repro;
  EXPECT_NE(repro.find("--hidden_size 4099"), std::string::npos) << repro;
}

TEST(EndToEnd, CsvIsAppendedNeverRewritten) {
  KBENCH_REQUIRE_GPU();
  const std::string csv_path = temp_file("append.csv");
  for (int run = 0; run < 2; ++run) {
    const auto r = run_kbench("--routine gemma_rmsnorm --batch_size 3 --num_heads 2 --hidden_size 96 -n 5 --output_path " + csv_path);
    ASSERT_EQ(r.exit_status, 0) << r.output;
  }
  const Csv csv = read_csv(csv_path);
  EXPECT_EQ(csv.rows.size(), 2u);
  EXPECT_EQ(csv.at(1, "num_heads"), "2");
  EXPECT_EQ(csv.at(1, "num_samples"), "5");
}

TEST(EndToEnd, TimerColumnSaysWhatReallyTimed) {
  KBENCH_REQUIRE_GPU();
  struct Mode {
    const char* flags;
    const char* timer;
    const char* calls_per_graph;
  };
  for (const Mode& m : {Mode{"", "cupti", "10"}, Mode{"--no_cuda_graph", "cupti", "0"},
                        Mode{"--use_cuda_events", "cuda_graph", "10"},
                        Mode{"--use_cuda_events --no_cuda_graph", "cuda_events", "0"}}) {
    const std::string csv_path = temp_file("timer.csv");
    const auto r = run_kbench(std::string("--routine rmsnorm --batch_size 64 --hidden_size 2048 -n 8 ") + m.flags +
                              " --output_path " + csv_path);
    ASSERT_EQ(r.exit_status, 0) << r.output;
    const Csv csv = read_csv(csv_path);
    ASSERT_EQ(csv.rows.size(), 1u);
    EXPECT_EQ(csv.at(0, "timer"), m.timer) << m.flags;
    EXPECT_EQ(csv.at(0, "calls_per_graph"), m.calls_per_graph) << m.flags;
    EXPECT_EQ(csv.at(0, "use_cupti"), std::string(m.timer) == "cupti" ? "True" : "False") << m.flags;
  }
}

TEST(EndToEnd, ClocksPowerNoiseAndJsonComeWithEveryResult) {
  KBENCH_REQUIRE_GPU();
  const std::string csv_path = temp_file("clocks.csv");
  const std::string json_path = temp_file("clocks.json");
  const auto r = run_kbench("--routine rmsnorm --batch_size 64 --hidden_size 4096 --backends cuda cute-dsl --max_noise 1 "
                            "--min_time 0.05 --refcheck --output_path " + csv_path + " --json " + json_path);
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("[INFO] cuda: the median's noise is "), std::string::npos) << r.output;
  const Csv csv = read_csv(csv_path);
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_GT(std::stod(csv.at(0, "sm_clock_mhz")), 100.0);
  EXPECT_GT(std::stod(csv.at(0, "sm_clock_max_mhz")), 500.0);
  EXPECT_GT(std::stod(csv.at(0, "power_w")), 10.0);
  EXPECT_FALSE(csv.at(0, "throttle_reasons").empty());
  EXPECT_LE(std::stod(csv.at(0, "noise")), 0.01);
  std::ifstream in(json_path);
  const auto doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_EQ(doc["results"][0]["backend"], "cuda");
  EXPECT_EQ(doc["results"][0]["median_time"].get<double>(), std::stod(csv.at(0, "median_time")));
  ASSERT_EQ(doc["cases"].size(), 1u);
  ASSERT_EQ(doc["cases"][0]["backends"].size(), 2u);
  EXPECT_EQ(doc["cases"][0]["backends"][0]["disposition"], "passed");
  EXPECT_EQ(doc["cases"][0]["backends"][1]["backend"], "cute-dsl");
  EXPECT_EQ(doc["cases"][0]["backends"][1]["disposition"], "not_supported");
}

TEST(EndToEnd, GpusAndShardsKeepTheRunsOrder) {
  KBENCH_REQUIRE_GPU();
  const std::string testlist = temp_file("spread.txt");
  std::ofstream(testlist) << "--routine rmsnorm --batch_size 1 2 3 --hidden_size 512 -n 5\n"
                             "--routine no_such_routine_yet\n"
                             "--routine mm_fp4 --m 128 --n 128 --k 128 --backends cutlass\n"  // Blackwell's: skipped
                             "--routine gemma_rmsnorm --batch_size 5 --hidden_size 256 -n 5\n";
  const std::string spread = temp_file("spread.csv");
  const auto all = run_kbench("--testlist " + testlist + " --gpus all --refcheck -v --output_path " + spread);
  EXPECT_EQ(all.exit_status, 1) << all.output;  // the unknown routine
  EXPECT_NE(all.output.find("one child process per case"), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("Testlist summary: 6 cases: 4 passed, 1 failed, 1 skipped"), std::string::npos) << all.output;
  const Csv csv = read_csv(spread);
  ASSERT_EQ(csv.rows.size(), 4u);
  const std::vector<std::string> order = {"1", "2", "3", "5"};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(csv.at(i, "batch_size"), order[i]);
  EXPECT_EQ(csv.at(3, "routine"), "gemma_rmsnorm");
  // [PERF] lines in the run's order too.
  EXPECT_LT(all.output.find("batch_size\":1"), all.output.find("batch_size\":3"));

  // Two shards of the same run: their CSVs, concatenated, are the run's rows in order.
  const std::string first = temp_file("shard0.csv"), second = temp_file("shard1.csv");
  const auto s0 = run_kbench("--testlist " + testlist + " --shard 0/2 -v --output_path " + first);
  const auto s1 = run_kbench("--testlist " + testlist + " --shard 1/2 -v --output_path " + second);
  EXPECT_NE(s0.output.find("[INFO] Shard 0/2: cases 1 to 3 of 6"), std::string::npos) << s0.output;
  EXPECT_NE(s1.output.find("[INFO] Shard 1/2: cases 4 to 6 of 6"), std::string::npos) << s1.output;
  const Csv a = read_csv(first), b = read_csv(second);
  ASSERT_EQ(a.rows.size(), 3u);
  ASSERT_EQ(b.rows.size(), 1u);
  EXPECT_EQ(a.at(2, "batch_size"), "3");
  EXPECT_EQ(b.at(0, "routine"), "gemma_rmsnorm");
}

TEST(EndToEnd, CaseTooLargeForTheGpuIsReported) {
  KBENCH_REQUIRE_GPU();
  const auto r = run_kbench("--routine rmsnorm --batch_size 10000000 --hidden_size 100000");
  EXPECT_EQ(r.exit_status, 1) << r.output;
  EXPECT_NE(r.output.find("case too large for GPU memory"), std::string::npos) << r.output;
}

TEST(EndToEnd, DecodeSweepWithBaselineWritesTheSeedCsv) {
  KBENCH_REQUIRE_GPU();
  const std::string csv_path = temp_file("decode.csv");
  const std::string sweep_path = temp_file("decode_sweep.csv");
  const auto r = run_kbench(
      "--routine BatchDecodeWithPagedKVCacheWrapper --backends fa2 fa2_tc --baseline fa2 --page_size 16 "
      "--batch_size 3 8 --s_kv 100 1000 --num_qo_heads 16 --num_kv_heads 4 --head_dim_qk 128 --head_dim_vo 128 "
      "--kv_layout HND --random_actual_seq_len --refcheck -n 5 --output_path " + csv_path +
      " --baseline_csv " + sweep_path);
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("fa2_tc speedup over fa2: "), std::string::npos) << r.output;

  const Csv csv = read_csv(csv_path);
  ASSERT_EQ(csv.rows.size(), 8u);  // 4 cases x 2 backends
  EXPECT_EQ(csv.at(0, "backend"), "fa2");  // the baseline runs first
  EXPECT_EQ(csv.at(0, "speedup_over_baseline"), "");
  EXPECT_GT(std::stod(csv.at(1, "speedup_over_baseline")), 0.0);
  EXPECT_EQ(csv.at(7, "batch_size"), "8");
  EXPECT_EQ(csv.at(7, "s_kv"), "1000");
  EXPECT_LE(std::stoi(csv.at(7, "avg_actual_seq_len")), 1000);
  for (std::size_t i = 0; i < csv.rows.size(); ++i) EXPECT_EQ(csv.at(i, "refcheck_status"), "passed") << i;

  const Csv sweep = read_csv(sweep_path);
  const std::vector<std::string> seed_columns = {"batch_size", "fa2_tc_mean", "fa2_tc_std", "baseline_mean",
                                                 "baseline_std", "speedup_percent", "q_dtype", "kv_cache_dtype",
                                                 "output_dtype", "block_size", "num_kv_heads", "head_size",
                                                 "max_seq_len"};
  EXPECT_EQ(sweep.header, seed_columns);
  ASSERT_EQ(sweep.rows.size(), 4u);
  EXPECT_EQ(sweep.at(3, "kv_cache_dtype"), "torch.bfloat16");
  EXPECT_EQ(sweep.at(3, "block_size"), "16");
  EXPECT_EQ(sweep.at(3, "max_seq_len"), "1000");
  const double baseline = std::stod(sweep.at(3, "baseline_mean"));
  const double candidate = std::stod(sweep.at(3, "fa2_tc_mean"));
  EXPECT_NEAR(std::stod(sweep.at(3, "speedup_percent")), (baseline - candidate) / baseline, 1e-9);
}

TEST(EndToEnd, DecodeAutoSaysWhatItChose) {
  KBENCH_REQUIRE_GPU();
  const auto r = run_kbench(
      "--routine BatchDecodeWithPagedKVCacheWrapper --backends auto --page_size 16 --batch_size 2 --s_kv 300 "
      "--num_qo_heads 32 --num_kv_heads 4 --head_dim_qk 128 --head_dim_vo 128 --refcheck -n 5");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("[PERF] auto(fa2_tc)"), std::string::npos) << r.output;
}

TEST(EndToEnd, DecodeFp8AndUnsupportedCombinationsAreSkippedNotFailed) {
  KBENCH_REQUIRE_GPU();
  const auto r = run_kbench(
      "--routine BatchDecodeWithPagedKVCacheWrapper --backends fa2_tc cudnn --page_size 16 --batch_size 4 "
      "--s_kv 300 --num_qo_heads 32 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 --q_dtype fp8_e4m3 "
      "--kv_dtype fp8_e4m3 --out_dtype fp8_e4m3 --refcheck -n 5");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("[WARNING] cudnn for routine BatchDecodeWithPagedKVCacheWrapper is not supported"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[PERF] fa2_tc"), std::string::npos) << r.output;
  const auto fp4 = run_kbench(
      "--routine BatchDecodeWithPagedKVCacheWrapper --backends fa2 --page_size 16 --batch_size 2 --s_kv 64 "
      "--num_qo_heads 8 --num_kv_heads 8 --head_dim_qk 64 --head_dim_vo 64 --out_dtype nvfp4");
  EXPECT_EQ(fp4.exit_status, 0) << fp4.output;
  EXPECT_NE(fp4.output.find("nvfp4 output"), std::string::npos) << fp4.output;
  EXPECT_NE(fp4.output.find("No backends to test"), std::string::npos) << fp4.output;
}

bool on_sm90() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    return false;
  }
  return major == 9 && minor == 0;
}

bool has(const std::string& output, const std::string& text) { return output.find(text) != std::string::npos; }

// Every backend that ran passed the refcheck and printed its [PERF] line.
void expect_ran(const std::string& output, const std::string& backend) {
  const std::regex perf("\\[PERF\\] " + backend +
                        " +:: median time \\d+\\.\\d{3} ms; std \\d+\\.\\d{3} ms; achieved tflops \\d+\\.\\d{3} "
                        "TFLOPs/sec; achieved tb_per_sec \\d+\\.\\d{3} TB/sec");
  EXPECT_TRUE(std::regex_search(output, perf)) << backend << "\n" << output;
}

// Prefill with one query token a request runs on the decode kernel (fa2_tc), ragged K/V read as
// pages of one token or the paged cache as it is, checked against the prefill reference; auto
// picks it there and only there.
TEST(EndToEnd, PrefillWithOneQueryTokenRunsOnTheDecodeKernel) {
  KBENCH_REQUIRE_GPU();
  for (const char* kv : {"BatchPrefillWithRaggedKVCacheWrapper", "BatchPrefillWithPagedKVCacheWrapper --page_size 5",
                         "BatchPrefillWithPagedKVCacheWrapper --page_size 16 --kv_layout HND"}) {
    for (const char* shape : {"--num_qo_heads 32 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 --causal",
                              "--num_qo_heads 6 --num_kv_heads 6 --head_dim_qk 64 --head_dim_vo 64 --q_dtype float16 "
                              "--kv_dtype float16",
                              "--num_qo_heads 16 --num_kv_heads 2 --head_dim_qk 256 --head_dim_vo 256"}) {
      const auto r = run_kbench(std::string("--routine ") + kv + " --backends fa2_tc auto --batch_size 7 --s_qo 1 " +
                                "--s_kv 300 --random_actual_seq_len --refcheck -n 3 " + shape);
      ASSERT_EQ(r.exit_status, 0) << r.output;
      EXPECT_FALSE(has(r.output, "[ERROR]")) << r.output;
      EXPECT_FALSE(has(r.output, "[WARNING]")) << r.output;
      expect_ran(r.output, "fa2_tc");
      expect_ran(r.output, "auto\\(fa2_tc\\)");
    }
  }
  const auto two = run_kbench(
      "--routine BatchPrefillWithRaggedKVCacheWrapper --backends fa2_tc auto --batch_size 3 --s_qo 2 --s_kv 64 "
      "--num_qo_heads 8 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 --refcheck -n 3");
  ASSERT_EQ(two.exit_status, 0) << two.output;
  EXPECT_TRUE(has(two.output, "one query token per request")) << two.output;
  EXPECT_FALSE(has(two.output, "[PERF] fa2_tc")) << two.output;
  EXPECT_FALSE(has(two.output, "auto(fa2_tc)")) << two.output;
}

// seed 000's example output: paged prefill, fa2 and cudnn, random lengths, causal, -vv.
TEST(EndToEnd, SeedPagedPrefillCommandRunsUnchanged) {
  KBENCH_REQUIRE_GPU();
  const auto r = run_kbench(
      "--routine BatchPrefillWithPagedKVCacheWrapper --backends fa2 cudnn --page_size 16 --batch_size 16 --s_qo 1024 "
      "--s_kv 1024 --num_qo_heads 8 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 --random_actual_seq_len "
      "--refcheck --causal --no_cuda_graph -vv");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_FALSE(has(r.output, "[ERROR]")) << r.output;
  EXPECT_FALSE(has(r.output, "[WARNING] fa2")) << r.output;
  expect_ran(r.output, "fa2");
#if KBENCH_HAVE_CUDNN
  expect_ran(r.output, "cudnn");
#endif
  for (const char* line : {"[INFO] Running testBatchPrefillWithPagedKVCacheWrapper",
                           "[VVERBOSE] s_qo == s_kv, making actual_seq_lens_kv the same as actual_seq_lens_q",
                           "[VERBOSE] Average actual qo seq len: ", "[VERBOSE] Average actual kv seq len: ",
                           "[VVERBOSE] actual_seq_lens_q.flatten() = [", "[VVERBOSE] q.shape = torch.Size([",
                           "[VVERBOSE] num_pages_per_seq = 64", "[VVERBOSE] total_num_pages = 1024",
                           "[VVERBOSE] kv_cache.shape = torch.Size([1024, 2, 8, 16, 128])",
                           "[VVERBOSE] kv_cache.stride() = (32768, 16384, 128, 1024, 1)",
                           "[VVERBOSE] block_tables.shape = torch.Size([16, 64])",
                           "[VVERBOSE] qo_indptr.shape = torch.Size([17])",
                           "[VVERBOSE] qo_indptr.dtype = torch.int32", "[VVERBOSE] kv_indptr.shape = torch.Size([17])",
                           "[VVERBOSE] kv_indices.shape = torch.Size([", "[VVERBOSE] kv_last_page_len.shape = torch.Size([16])",
                           "[VVERBOSE] scale = 0.08838834764831843"}) {
    EXPECT_TRUE(has(r.output, line)) << line << "\n" << r.output;
  }
}

// seed 002's DeepSeek-R1 ragged prefill: cutlass is skipped with the reference's warning, fa3 runs
// on Hopper, every backend that runs passes the refcheck (--allow_output_mismatch notwithstanding).
TEST(EndToEnd, SeedRaggedPrefillCommandRunsUnchanged) {
  KBENCH_REQUIRE_GPU();
  const auto r = run_kbench(
      "--routine BatchPrefillWithRaggedKVCacheWrapper --backends fa2 fa3 cutlass cudnn --batch_size 16 --s_qo 1024 "
      "--s_kv 1024 --num_qo_heads 128 --num_kv_heads 128 --head_dim_qk 192 --head_dim_vo 128 --random_actual_seq_len "
      "-vv --refcheck --causal --q_dtype bfloat16 --kv_dtype bfloat16 --allow_output_mismatch "
      "--generate_repro_command --case_tag \"DeepSeek-R1\"");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_FALSE(has(r.output, "[ERROR]")) << r.output;  // no mismatch, even where one would be allowed
  EXPECT_TRUE(has(r.output,
                  "[WARNING] cutlass for routine BatchPrefillWithRaggedKVCacheWrapper is not supported on compute "
                  "capability"))
      << r.output;
  expect_ran(r.output, "fa2");
  if (on_sm90()) expect_ran(r.output, "fa3");
#if KBENCH_HAVE_CUDNN
  expect_ran(r.output, "cudnn");
#endif
  for (const char* line : {"[INFO] Running testBatchPrefillWithRaggedKVCacheWrapper",
                           "[VVERBOSE] s_qo == s_kv, making actual_seq_lens_kv the same as actual_seq_lens_q",
                           "[VERBOSE] Average actual qo seq len: ", "[VVERBOSE] actual_seq_lens_kv.flatten() = [",
                           "[VVERBOSE] k.shape = torch.Size([", "[VVERBOSE] v.shape = torch.Size([",
                           "[VVERBOSE] qo_indptr.shape = torch.Size([17])",
                           "[VVERBOSE] kv_indptr.shape = torch.Size([17])",
                           "[VVERBOSE] scale = 0.07216878364870323",
                           "[INFO] To reproduce this test case, run the following command: kbench --routine "
                           "BatchPrefillWithRaggedKVCacheWrapper"}) {
    EXPECT_TRUE(has(r.output, line)) << line << "\n" << r.output;
  }
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(--case_tag DeepSeek-R1)"))) << r.output;
}

// auto says what it chose (fa3 on Hopper), cudnn-native runs as the cudnn backend, and the CSV
// carries both names, the average q length and the refcheck status; q shorter than kv, HND cache.
TEST(EndToEnd, PrefillAutoCudnnNativeAndCsv) {
  KBENCH_REQUIRE_GPU();
  const std::string csv_path = temp_file("prefill.csv");
  const auto r = run_kbench(
      "--routine BatchPrefillWithPagedKVCacheWrapper --backends auto fa2 cudnn-native --page_size 16 --batch_size 3 "
      "--s_qo 100 --s_kv 300 --num_qo_heads 16 --num_kv_heads 4 --head_dim_qk 128 --head_dim_vo 128 --kv_layout HND "
      "--causal --random_actual_seq_len --refcheck -n 5 -vv --output_path " + csv_path);
  ASSERT_EQ(r.exit_status, 0) << r.output;
  const std::string chosen = on_sm90() ? "fa3" : "fa2";
  EXPECT_TRUE(has(r.output, "[PERF] auto(" + chosen + ")")) << r.output;
  EXPECT_TRUE(has(r.output, "[VVERBOSE] s_qo < s_kv, sampling actual_seq_lens_kv")) << r.output;
#if KBENCH_HAVE_CUDNN
  EXPECT_TRUE(has(r.output, "[INFO] kbench runs cudnn-native as its cudnn backend")) << r.output;
  const std::size_t rows = 3;
#else
  const std::size_t rows = 2;
#endif
  const Csv csv = read_csv(csv_path);
  ASSERT_EQ(csv.rows.size(), rows);
  EXPECT_EQ(csv.at(0, "backend"), "auto");
  EXPECT_EQ(csv.at(0, "resolved_backend"), chosen);
  EXPECT_EQ(csv.at(1, "backend"), "fa2");
  if (rows == 3) {
    EXPECT_EQ(csv.at(2, "backend"), "cudnn-native");
    EXPECT_EQ(csv.at(2, "resolved_backend"), "cudnn");
  }
  for (std::size_t i = 0; i < rows; ++i) {
    EXPECT_EQ(csv.at(i, "refcheck_status"), "passed") << i;
    EXPECT_EQ(csv.at(i, "causal"), "True") << i;
    EXPECT_EQ(csv.at(i, "kv_layout"), "HND") << i;
    EXPECT_LE(std::stoi(csv.at(i, "avg_actual_seq_len")), 100) << i;
    EXPECT_GT(std::stod(csv.at(i, "tflops")), 0.0) << i;
  }
}

// fp8 inputs: fa2 (and cuDNN where it cannot) are skipped with a reason, not failed; fa3 runs them
// on Hopper where its kernel takes them.
TEST(EndToEnd, PrefillFp8SkipsWhatCannotRun) {
  KBENCH_REQUIRE_GPU();
  const auto r = run_kbench(
      "--routine BatchPrefillWithRaggedKVCacheWrapper --backends fa2 fa3 --batch_size 2 --s_qo 200 --s_kv 200 "
      "--num_qo_heads 8 --num_kv_heads 2 --head_dim_qk 128 --head_dim_vo 128 --q_dtype fp8_e4m3 --kv_dtype fp8_e4m3 "
      "--causal --refcheck -n 5");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[WARNING] fa2 for routine BatchPrefillWithRaggedKVCacheWrapper is not supported")) << r.output;
  EXPECT_TRUE(has(r.output, "fp8 runs on fa3")) << r.output;
  EXPECT_FALSE(has(r.output, "Output tensor mismatch")) << r.output;
}

}  // namespace
}  // namespace kbench
