// GPU tests of the GEMM family's cuDNN backend (bmm_fp8's FP8 matmul graph) through kbench's refcheck
// (gemm_backend_check.hpp: the fp32 reference, poisoned output, a second input set, a CUDA-graph
// replay): e4m3 and e5m2 operands, odd m, fp16 out, the reference's sample shape and the MLA batch.
// Each test skips itself without a CUDA device; where cuDNN refuses a line it prints the reason.
#include <gtest/gtest.h>

#include "gemm/gemm_backend_check.hpp"
#include "gpu_test_support.hpp"

namespace {

using kbench::testing::GemmLine;

TEST(CudnnGemm, BmmFp8) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           GemmLine{"bmm_fp8", "--batch_size 3 --m 5 --n 48 --k 64"},
           GemmLine{"bmm_fp8", "--batch_size 2 --m 37 --n 96 --k 160 --out_dtype float16"},
           GemmLine{"bmm_fp8", "--batch_size 2 --m 33 --n 64 --k 128 --input_dtype fp8_e5m2"},
           GemmLine{"bmm_fp8", "--batch_size 2 --m 16 --n 64 --k 128 --mat2_dtype fp8_e5m2"},
           GemmLine{"bmm_fp8", "--batch_size 64 --m 4 --n 1024 --k 7168"},
           GemmLine{"bmm_fp8", "--batch_size 256 --m 1 --n 1024 --k 7168"},
       }) {
    kbench::testing::expect_gemm_backend_passes("cudnn", line);
  }
}

}  // namespace
