// GPU tests of the GEMM family's CUTLASS backend (sm_90a kernels), through the refcheck kbench runs
// (gemm_backend_check.hpp): the blockwise-scaled FP8 GEMM in both scale layouts, with m not a
// multiple of 4 (A's scales rewritten with a padded row stride), m below and above a tile, both
// output dtypes, decode shapes and n not a multiple of 128 (a partial last scale block); the grouped blockwise-scaled FP8 GEMM (one group, whose MN-major
// scales pass unchanged, and several, whose A scales are rewritten per group; m not a multiple of 4;
// both scale layouts); per-tensor FP8 (batches, fp16 out); BF16 (batches, odd m). Each line also
// checks the second input set and a CUDA-graph replay. Then kbench end to end with --refcheck, the
// group GEMM's sample line on its default backend. Each test skips itself where no CUDA device is
// present; off Hopper the backend says why and the line is not run.
#include <gtest/gtest.h>

#include <string>

#include "gemm/gemm_backend_check.hpp"
#include "gpu_test_support.hpp"

namespace {

using kbench::testing::GemmLine;

void expect_cutlass_passes(const GemmLine& line) { kbench::testing::expect_gemm_backend_passes("cutlass", line); }

TEST(CutlassGemm, BlockwiseFp8) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           GemmLine{"gemm_fp8_nt_groupwise", "--m 64 --n 256 --k 512"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 64 --n 256 --k 512 --scale_major_mode K --out_dtype float16"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 7 --n 384 --k 384"},  // A's scale rows padded to 8
           GemmLine{"gemm_fp8_nt_groupwise", "--m 1 --n 128 --k 128 --scale_major_mode K"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 300 --n 640 --k 1152 --out_dtype float16"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 1000 --n 1536 --k 7168 --scale_major_mode K"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 128 --n 1024 --k 7168 --mma_sm 2"},
           // n not a multiple of 128: B's last scale block partial (64 and 72 rows), passed through
           // (MN) and rewritten (K, m 7).
           GemmLine{"gemm_fp8_nt_groupwise", "--m 64 --n 2112 --k 7168"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 7 --n 200 --k 384 --scale_major_mode K"},
       }) {
    expect_cutlass_passes(line);
  }
}

TEST(CutlassGemm, GroupedBlockwiseFp8) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           GemmLine{"group_gemm_fp8_nt_groupwise", "--group_size 1 --m 64 --n 256 --k 512"},
           GemmLine{"group_gemm_fp8_nt_groupwise", "--group_size 1 --m 7 --n 256 --k 512"},  // unpadded scale rows
           GemmLine{"group_gemm_fp8_nt_groupwise", "--group_size 2 --m 7 --n 256 --k 512"},
           GemmLine{"group_gemm_fp8_nt_groupwise",
                    "--group_size 2 --m 64 --n 256 --k 512 --scale_major_mode K --out_dtype float16"},
           GemmLine{"group_gemm_fp8_nt_groupwise", "--group_size 2 --m 16 --n 1024 --k 7168 --mma_sm 1"},
           GemmLine{"group_gemm_fp8_nt_groupwise", "--group_size 8 --m 300 --n 1024 --k 7168 --scale_major_mode K"},
           GemmLine{"group_gemm_fp8_nt_groupwise", "--group_size 8 --m 64 --n 1024 --k 512"},
       }) {
    expect_cutlass_passes(line);
  }
}

TEST(CutlassGemm, PerTensorFp8) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           GemmLine{"bmm_fp8", "--batch_size 3 --m 5 --n 48 --k 64"},
           GemmLine{"bmm_fp8", "--batch_size 2 --m 37 --n 96 --k 160 --out_dtype float16"},
           GemmLine{"bmm_fp8", "--batch_size 256 --m 1 --n 1024 --k 7168"},
           GemmLine{"mm_fp8", "--m 37 --n 96 --k 256"},
           GemmLine{"mm_fp8", "--m 512 --n 1024 --k 2048"},
       }) {
    expect_cutlass_passes(line);
  }
}

TEST(CutlassGemm, Bf16) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           GemmLine{"mm_bf16", "--m 33 --n 72 --k 40"},
           GemmLine{"mm_bf16", "--m 300 --n 512 --k 1024"},
           GemmLine{"bmm_bf16", "--batch_size 3 --m 31 --n 40 --k 72"},
       }) {
    expect_cutlass_passes(line);
  }
}

TEST(CutlassGemm, KbenchRefchecksEndToEnd) {
  KBENCH_REQUIRE_GPU();
  int device = 0, major = 0, minor = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) GTEST_SKIP() << "kbench's CUTLASS GEMMs are built for sm_90a only";
  const std::string list = kbench::testing::write_testlist(
      "kbench_gemm_cutlass_e2e.txt",
      "--routine gemm_fp8_nt_groupwise --m 16 --n 1024 --k 7168 --mma_sm 1 --scale_major_mode MN --backends cutlass "
      "--refcheck\n"
      "--routine gemm_fp8_nt_groupwise --m 100 --n 7168 --k 2048 --scale_major_mode K --backends cutlass --refcheck\n"
      "--routine bmm_fp8 --batch_size 64 --m 4 --n 1024 --k 7168 --input_dtype fp8_e4m3 --mat2_dtype fp8_e4m3 "
      "--out_dtype bfloat16 --backends cutlass --refcheck\n"
      "--routine mm_fp8 --m 96 --n 512 --k 1024 --backends cutlass --refcheck\n"
      "--routine mm_bf16 --m 257 --n 512 --k 384 --backends cutlass --refcheck\n"
      "--routine bmm_bf16 --batch_size 8 --m 64 --n 256 --k 320 --backends cutlass --refcheck\n"
      "--routine group_gemm_fp8_nt_groupwise --m 16 --n 1024 --k 7168 --mma_sm 1 --group_size 2 --scale_major_mode MN "
      "--refcheck\n");
  kbench::testing::expect_testlist_passes(list, "-n 3", 7);
}

}  // namespace
