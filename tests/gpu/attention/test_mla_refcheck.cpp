// MLA decode through kbench, on a GPU: FlashInfer's fa2 and Hopper MLA kernels pass kbench's
// refcheck (against the fp32 reference) on bench/attention/mla/mla_refcheck.txt (ragged lengths,
// page sizes 1 / 16 / 64, one and two query tokens, 16 and 128 heads, split KV), or, in a build
// without FlashInfer, are skipped with the build's reason; kbench's own fa2 kernel passes it on
// bench/attention/mla/mla_fa2_refcheck.txt (page sizes 1 to 128, 1 / 2 / 4 query tokens, split and
// unsplit KV, fp8 e4m3 KV with bfloat16 or fp8 q), and its Hopper fa3 kernel (sm_90 only) on
// bench/attention/mla/mla_fa3_refcheck.txt (the same kinds of lines); the reference's sample line 19 runs unchanged: fa2 and
// (on an sm_90 device) fa3 are kbench's, trtllm-gen-native is skipped with its reason.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "gpu_test_support.hpp"
#include "run_command.hpp"

namespace kbench {
namespace {

using testing::run_kbench;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kTestlist = std::string(KBENCH_SOURCE_DIR) + "/bench/attention/mla/mla_refcheck.txt";
constexpr int kBackendRuns = 5 * 2;  // five lines, flashinfer_fa2 and flashinfer_fa3 on each

TEST(MlaRefcheck, FlashinferKernelsPassTheRefcheckTestlist) {
  KBENCH_REQUIRE_GPU();
#if KBENCH_HAVE_FLASHINFER
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  if (prop.major != 9 || prop.minor != 0) GTEST_SKIP() << "kbench builds FlashInfer's kernels for sm_90a";
  testing::expect_testlist_passes(kTestlist, "-n 3 -d 1", kBackendRuns);
#else
  const auto r = run_kbench("--testlist " + kTestlist + " -n 3 -d 1");
  EXPECT_TRUE(has(r.output, "[WARNING] flashinfer_fa3 for routine BatchMLAPagedAttentionWrapper")) << r.output;
  EXPECT_TRUE(has(r.output, "kbench was built without FlashInfer's kernels")) << r.output;
#endif
}

TEST(MlaRefcheck, KbenchFa2PassesTheRefcheckTestlist) {
  KBENCH_REQUIRE_GPU();
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  if (prop.major < 8) GTEST_SKIP() << "kbench's MLA fa2 kernel needs sm_80+";
  testing::expect_testlist_passes(std::string(KBENCH_SOURCE_DIR) + "/bench/attention/mla/mla_fa2_refcheck.txt",
                                  "-n 3 -d 1", 10);
}

TEST(MlaRefcheck, KbenchFa3PassesTheRefcheckTestlist) {
  KBENCH_REQUIRE_GPU();
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  if (prop.major != 9 || prop.minor != 0) GTEST_SKIP() << "kbench's MLA fa3 kernel needs sm_90a";
  // Eleven lines (seven bf16, four fp8), fa3 on each and fa2 beside it on two.
  testing::expect_testlist_passes(std::string(KBENCH_SOURCE_DIR) + "/bench/attention/mla/mla_fa3_refcheck.txt",
                                  "-n 3 -d 1", 13);
}

TEST(MlaRefcheck, TheReferenceSampleLineRunsUnchanged) {
  KBENCH_REQUIRE_GPU();
  const auto r = run_kbench(
      "--routine BatchMLAPagedAttentionWrapper --backends trtllm-gen-native fa2 fa3 --page_size 32 --batch_size 16 "
      "--s_qo 1 --s_kv 1024 --num_qo_heads 128 --num_kv_heads 128 --head_dim_ckv 512 --head_dim_kpe 64 "
      "--random_actual_seq_len -vv --refcheck --q_dtype bfloat16 --kv_dtype bfloat16 --generate_repro_command "
      "--case_tag DeepSeek-R1");
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  const bool hopper = prop.major == 9 && prop.minor == 0;
  EXPECT_FALSE(has(r.output, "[ERROR]")) << r.output;
  EXPECT_TRUE(has(r.output, "[WARNING] trtllm-gen-native for routine BatchMLAPagedAttentionWrapper")) << r.output;
  // fa2 and, on sm_90, fa3 are kbench's MLA kernels: they run and pass the refcheck against the fp32 reference.
  EXPECT_EQ(has(r.output, "[WARNING] fa3 for routine BatchMLAPagedAttentionWrapper"), !hopper) << r.output;
  EXPECT_FALSE(has(r.output, "[WARNING] fa2 for routine BatchMLAPagedAttentionWrapper")) << r.output;
  EXPECT_TRUE(has(r.output, hopper ? "Backends: 2 passed" : "Backends: 1 passed")) << r.output;
  EXPECT_EQ(r.exit_status, 0) << r.output;
}

}  // namespace
}  // namespace kbench
