// Backends as objects, on a GPU: every backend of every case ends with a disposition the summary
// lists; FlashInfer's own kernels (backend flashinfer*) pass kbench's refcheck on every routine
// they serve where the build has them, and are skipped with the one reason where it has not.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "gpu_test_support.hpp"
#include "run_command.hpp"

namespace kbench {
namespace {

using testing::run_kbench;

bool on_sm90() {
  cudaDeviceProp prop{};
  return cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major == 9 && prop.minor == 0;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr const char* kDecode =
    "--routine BatchDecodeWithPagedKVCacheWrapper --batch_size 5 --s_kv 333 --num_qo_heads 32 --num_kv_heads 8 "
    "--head_dim_qk 128 --head_dim_vo 128 --page_size 16 --random_actual_seq_len ";
constexpr const char* kRagged =
    "--routine BatchPrefillWithRaggedKVCacheWrapper --batch_size 3 --s_qo 200 --s_kv 300 --num_qo_heads 16 "
    "--num_kv_heads 4 --head_dim_qk 128 --head_dim_vo 128 --random_actual_seq_len --causal ";
constexpr const char* kPaged =
    "--routine BatchPrefillWithPagedKVCacheWrapper --batch_size 3 --s_qo 129 --s_kv 257 --num_qo_heads 8 "
    "--num_kv_heads 8 --head_dim_qk 64 --head_dim_vo 64 --page_size 16 --random_actual_seq_len ";

// Runs `args` with --refcheck and expects every named backend to pass, or, in a build without
// FlashInfer, to be skipped with the build's reason.
void expect_flashinfer_passes(const std::string& args, const std::vector<std::string>& backends) {
  std::string names;
  for (const auto& b : backends) names += " " + b;
  const auto r = run_kbench(args + " --refcheck -n 3 -d 1 --backends" + names);
#if KBENCH_HAVE_FLASHINFER
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_FALSE(has(r.output, "[ERROR]")) << r.output;
  EXPECT_FALSE(has(r.output, "[WARNING]")) << r.output;
  for (const auto& b : backends) EXPECT_TRUE(has(r.output, "[PERF] " + b)) << b << "\n" << r.output;
  EXPECT_TRUE(has(r.output, std::to_string(backends.size()) + " passed, 0 ran without refcheck, 0 incorrect"))
      << r.output;
#else
  for (const auto& b : backends) {
    EXPECT_TRUE(has(r.output, "[WARNING] " + b + " for routine")) << r.output;
  }
  EXPECT_TRUE(has(r.output, "kbench was built without FlashInfer's kernels")) << r.output;
#endif
}

TEST(FlashinferYardstick, NormRoutines) {
  KBENCH_REQUIRE_GPU();
  if (KBENCH_HAVE_FLASHINFER && !on_sm90()) GTEST_SKIP() << "kbench builds FlashInfer's kernels for sm_90a";
  for (const char* routine : {"rmsnorm", "fused_add_rmsnorm", "gemma_rmsnorm"}) {
    expect_flashinfer_passes(std::string("--routine ") + routine + " --batch_size 37 --hidden_size 4096 --input_dtype float16",
                             {"flashinfer"});
  }
  for (const char* routine : {"rmsnorm_quant", "fused_add_rmsnorm_quant"}) {
    // --scale other than 1: FlashInfer divides by its scale, kbench passes the reciprocal.
    expect_flashinfer_passes(std::string("--routine ") + routine + " --batch_size 37 --hidden_size 2048 --scale 0.5",
                             {"flashinfer"});
  }
}

TEST(FlashinferYardstick, Decode) {
  KBENCH_REQUIRE_GPU();
  if (KBENCH_HAVE_FLASHINFER && !on_sm90()) GTEST_SKIP() << "kbench builds FlashInfer's kernels for sm_90a";
  expect_flashinfer_passes(kDecode, {"flashinfer", "flashinfer_fa2_tc"});
  expect_flashinfer_passes(std::string(kDecode) + "--kv_layout HND --q_dtype float16 --kv_dtype float16",
                           {"flashinfer_fa2", "flashinfer_fa2_tc"});
}

TEST(FlashinferYardstick, Prefill) {
  KBENCH_REQUIRE_GPU();
  if (KBENCH_HAVE_FLASHINFER && !on_sm90()) GTEST_SKIP() << "kbench builds FlashInfer's kernels for sm_90a";
  expect_flashinfer_passes(kRagged, {"flashinfer", "flashinfer_fa2"});
  expect_flashinfer_passes(std::string(kRagged) + "--head_dim_qk 192 --head_dim_vo 128", {"flashinfer_fa3"});
  expect_flashinfer_passes(kPaged, {"flashinfer_fa2"});
}

// One run, several backends: each ends with its disposition, listed in the summary, whatever the
// others did (skipped for this GPU or problem, or run).
TEST(BackendDispositions, TheSummaryListsEveryBackend) {
  KBENCH_REQUIRE_GPU();
  const auto r = run_kbench(std::string(kDecode) + "--q_dtype fp8_e4m3 --kv_dtype fp8_e4m3 --backends fa2 cudnn "
                                                   "cutlass auto --refcheck -n 3 -d 1");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[INFO] Backends: 2 passed, 0 ran without refcheck, 0 incorrect, 2 not supported, 0 failed"))
      << r.output;
  EXPECT_TRUE(has(r.output, "fa2 passed; cudnn not supported (")) << r.output;
  EXPECT_TRUE(has(r.output, "cutlass not supported (kbench has no cutlass backend for this routine); auto(fa2_tc) passed"))
      << r.output;
}

}  // namespace
}  // namespace kbench
