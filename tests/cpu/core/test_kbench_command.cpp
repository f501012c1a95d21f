// The kbench binary as a user runs it: help, list, and every bad input that needs no GPU.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/check.hpp"
#include "core/cli.hpp"
#include "core/shell_words.hpp"
#include "core/testlist.hpp"
#include "core/usage_error.hpp"
#include "routines/builtin_routines.hpp"
#include "run_command.hpp"

namespace kbench {
namespace {

using testing::run_kbench;

bool gpu_present() {
  int n = 0;
  const bool present = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  (void)cudaGetLastError();
  return present;
}

int count_lines_starting(const std::string& text, const std::string& prefix) {
  int n = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (text.compare(pos, prefix.size(), prefix) == 0) ++n;
    pos = text.find('\n', pos);
    if (pos == std::string::npos) break;
    ++pos;
  }
  return n;
}

TEST(KbenchCommand, HelpListsRoutines) {
  const auto r = run_kbench("--help");
  EXPECT_EQ(r.exit_status, 0);
  for (const char* routine : {"rmsnorm", "fused_add_rmsnorm", "gemma_rmsnorm", "rmsnorm_quant", "fused_add_rmsnorm_quant"}) {
    EXPECT_NE(r.output.find(routine), std::string::npos) << routine;
  }
}

TEST(KbenchCommand, RoutineHelpListsFlagsWithDefaults) {
  const auto r = run_kbench("--routine rmsnorm_quant --help");
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_NE(r.output.find("--scale FLOAT"), std::string::npos);
  EXPECT_NE(r.output.find("default: 1.0"), std::string::npos);
  EXPECT_NE(r.output.find("default: fp8_e4m3"), std::string::npos);
}

TEST(KbenchCommand, ListShowsEveryRoutineAndBackend) {
  const auto r = run_kbench("--list");
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_NE(r.output.find("fused_add_rmsnorm_quant"), std::string::npos);
  if (!gpu_present()) {
    EXPECT_NE(r.output.find("no CUDA device"), std::string::npos);
  }
}

struct BadInput {
  const char* arguments;
  const char* message;
};

TEST(KbenchCommand, UsageErrorsExitTwoWithOneClearLine) {
  const BadInput cases[] = {
      {"--routine nosuch", "[ERROR] unknown routine 'nosuch'"},
      {"--routine rmsnorm --batch_size 1 --hidden_size 8 --frobnicate", "--frobnicate"},
      {"--routine rmsnorm --batch_size 1 --hidden_size 8 --backends cuda bogus", "unknown backend 'bogus'"},
      {"--routine rmsnorm --hidden_size 8", "missing required flag --batch_size"},
      {"--routine rmsnorm --batch_size 1 --hidden_size 8 --input_dtype fp64", "invalid choice 'fp64'"},
      {"--routine rmsnorm --batch_size 1e3 --hidden_size 8", "'1e3' is not an integer"},
      {"--testlist /nonexistent/list.txt", "cannot read '/nonexistent/list.txt'"},
      {"--routine rmsnorm --batch_size 1 --hidden_size 8 --output_path /nonexistent-dir/out.csv",
       "cannot write '/nonexistent-dir/out.csv'"},
      {"", "no routine given"},
  };
  for (const BadInput& c : cases) {
    const auto r = run_kbench(c.arguments);
    EXPECT_EQ(r.exit_status, 2) << c.arguments << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.arguments << "\n" << r.output;
    EXPECT_EQ(count_lines_starting(r.output, "[ERROR]"), 1) << r.output;
  }
}

TEST(KbenchCommand, NoDeviceIsSaidClearly) {
  if (gpu_present()) GTEST_SKIP() << "a CUDA device is present";
  const auto r = run_kbench("--routine rmsnorm --batch_size 32 --hidden_size 4096");
  EXPECT_EQ(r.exit_status, 3) << r.output;
  EXPECT_NE(r.output.find("[ERROR] No CUDA device is present"), std::string::npos) << r.output;
}

// Bad values are the command line's fault: exit 2 naming the flag, before the device check (they
// exited 1 on a GPU and 3 without one).
TEST(KbenchCommand, BadValuesAreUsageErrorsWithOrWithoutAGpu) {
  for (const char* bad : {"--routine rmsnorm --batch_size 0 --hidden_size 8", "--routine rmsnorm --batch_size -3 --hidden_size 8",
                          "--routine rmsnorm --batch_size 1 --hidden_size 8 --eps -1",
                          "--routine rmsnorm_quant --batch_size 1 --hidden_size 8 --out_dtype nvfp4",
                          "--routine BatchPrefillWithRaggedKVCacheWrapper --batch_size 1 --s_qo 9 --s_kv 8 --num_qo_heads 1 "
                          "--num_kv_heads 1 --head_dim_qk 64 --head_dim_vo 64"}) {
    const auto r = run_kbench(bad);
    EXPECT_EQ(r.exit_status, 2) << bad << "\n" << r.output;
    EXPECT_EQ(r.output.find("No CUDA device"), std::string::npos) << r.output;
  }
  EXPECT_NE(run_kbench("--routine rmsnorm --batch_size 0 --hidden_size 8").output.find("--batch_size must be positive, got 0"),
            std::string::npos);
}

// kbench --check: no GPU, nothing runs; every line said to run, be skipped (why) or fail (why).
TEST(KbenchCommand, CheckNeedsNoGpu) {
  const std::string peer = std::string(KBENCH_SOURCE_DIR) + "/../shared/peer/flashinfer_sample_testlist.txt";
  if (std::filesystem::exists(peer)) {
    const auto r = run_kbench("--testlist " + peer + " --check");
    EXPECT_EQ(r.exit_status, 0) << r.output;
    EXPECT_NE(r.output.find("[INFO] Check: 139 lines: 115 run (115 cases), 24 skipped, 0 with errors"), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("[ERROR]"), std::string::npos) << r.output;
  }
  const auto big = run_kbench(
      "--routine BatchPrefillWithRaggedKVCacheWrapper --batch_size 64 --s_qo 65536 --s_kv 65536 --num_qo_heads 64 "
      "--num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 --refcheck --check");
  EXPECT_EQ(big.exit_status, 2) << big.output;
  EXPECT_NE(big.output.find("GiB of GPU memory, more than --gpu_memory_gib 79.6"), std::string::npos) << big.output;
  const auto fits = run_kbench(
      "--routine BatchPrefillWithRaggedKVCacheWrapper --batch_size 64 --s_qo 65536 --s_kv 65536 --num_qo_heads 64 "
      "--num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 --refcheck --check --gpu_memory_gib 500");
  EXPECT_EQ(fits.exit_status, 0) << fits.output;
  EXPECT_NE(fits.output.find("[INFO] the command: BatchPrefillWithRaggedKVCacheWrapper: 1 case with fa2"), std::string::npos)
      << fits.output;
}

TEST(KbenchCommand, ShippedTestlistsAreValidCases) {
  // Every line of the shipped testlists parses, and every case of its sweep passes its routine's
  // validation (no GPU needed: make_case allocates nothing).
  const RoutineRegistry registry = make_builtin_registry();
  std::vector<std::string> names;
  for (const char* folder : {"samples", "bench"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(KBENCH_SOURCE_DIR) + "/" + folder)) {
      const std::string path = entry.path().string();
      // bench/results holds what ran (some of it experiments on builds long gone).
      if (entry.path().extension() != ".txt" || path.find("/results/") != std::string::npos) continue;
      names.push_back(path.substr(std::string(KBENCH_SOURCE_DIR).size() + 1));
    }
  }
  EXPECT_GE(names.size(), 12u);
  for (const std::string& name : names) {
    const auto lines = read_testlist(std::string(KBENCH_SOURCE_DIR) + "/" + name);
    EXPECT_FALSE(lines.empty()) << name;
    for (const TestlistLine& line : lines) {
      SCOPED_TRACE(std::string(name) + ":" + std::to_string(line.number));
      const auto words = split_shell_words(line.text);
      for (const CaseArgs& c : expand_sweep(parse_case(words, registry))) {
        EXPECT_NO_THROW((void)registry.find(c.routine())->make_case(c)) << repro_command(c);
      }
    }
  }
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

// FlashInfer's own sample testlist (../shared/peer), unchanged: every line is a kbench case that
// passes validation or a routine of the reference that kbench skips; no line is a usage error (4
// died on prims-ts / trtllm-gen-native before, taking fa2, fa2_tc and cudnn with them).
TEST(KbenchCommand, ThePeerTestlistIsKnownLineByLine) {
  const std::string path = std::string(KBENCH_SOURCE_DIR) + "/../shared/peer/flashinfer_sample_testlist.txt";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const RoutineRegistry registry = make_builtin_registry();
  int cases = 0;
  int skipped = 0;
  int foreign_backends_only = 0;
  for (const TestlistLine& line : read_testlist(path)) {
    SCOPED_TRACE("line " + std::to_string(line.number) + ": " + line.text);
    try {
      const CaseArgs args = parse_case(split_shell_words(line.text), registry);
      const Routine& routine = *registry.find(args.routine());
      // A line naming only backends kbench lacks is skipped before its case is built (the runner).
      if (!names_a_kbench_backend(routine, args)) {
        ++foreign_backends_only;
        continue;
      }
      for (const CaseArgs& one : expand_sweep(args)) {
        EXPECT_NO_THROW((void)routine.make_case(one));
        ++cases;
      }
    } catch (const RoutineNotBuilt&) {
      ++skipped;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  std::cout << "[ peer     ] " << cases << " kbench cases, " << foreign_backends_only
            << " lines naming only backends kbench lacks, " << skipped << " lines of routines kbench has not built\n";
  EXPECT_GT(cases, 10);
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

TEST(KbenchCommand, AReferenceRoutineKbenchHasNotBuiltIsSkipped) {
  const auto r = testing::run_kbench("--routine selective_state_update --batch_size 2 --seq_len 1024 --backends cuda");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("[WARNING] kbench has no selective_state_update yet. Skipping."), std::string::npos) << r.output;
  // A name neither kbench nor the reference knows is still an error, with the names it is close to.
  const auto typo = testing::run_kbench("--routine softmx --batch_size 2");
  EXPECT_EQ(typo.exit_status, 2) << typo.output;
  EXPECT_NE(typo.output.find("did you mean: softmax"), std::string::npos) << typo.output;
  // Backend names of the reference's other routines are accepted (and skipped where kbench lacks them).
  const RoutineRegistry registry = make_builtin_registry();
  const auto names = registry.accepted_backend_names();
  for (const char* name : {"prims-ts", "trtllm-gen-native", "tgv", "cublaslt", "b12x", "tinygemm", "cutile",
                           "trtllm_low_latency", "moe_a2a"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

}  // namespace
}  // namespace kbench
