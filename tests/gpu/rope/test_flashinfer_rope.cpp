// FlashInfer's FP8 RoPE kernels (pos_enc.cuh) through kbench's glue, beside kbench's own: every
// FP8 routine on odd sizes, partial rotary dims, interleaved pairs, e5m2, page sizes 1 / 16 / 64 in
// NHD and HND, both backends refchecked against the host reference. Built only with FlashInfer.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "gpu_test_support.hpp"
#include "run_command.hpp"

namespace {

TEST(FlashinferRope, Fp8RoutinesPassTheRefcheck) {
  KBENCH_REQUIRE_GPU();
  const std::string list = ::testing::TempDir() + "kbench_flashinfer_rope.txt";
  {
    std::ofstream out(list);
    out << "--routine rope_quantize_fp8 --batch_size 3 --seq_len 333 --num_qo_heads 32 --num_kv_heads 8 --head_dim 128 "
           "--input_dtype bfloat16 --refcheck\n"
           "--routine rope_quantize_fp8 --batch_size 2 --seq_len 1000 --num_qo_heads 7 --num_kv_heads 3 --head_dim 128 "
           "--rotary_dim 64 --no_rope_dim 48 --interleave --quant_dtype fp8_e5m2 --enable_pdl --refcheck\n"
           "--routine mla_rope_quantize_fp8 --batch_size 4 --seq_len 129 --num_qo_heads 16 --num_kv_heads 16 --head_dim 576 "
           "--no_rope_dim 512 --input_dtype bfloat16 --refcheck\n"
           "--routine rope_quantize_fp8_append_paged_kv_cache --batch_size 3 --seq_len 100 --num_qo_heads 32 --num_kv_heads 8 "
           "--head_dim 128 --page_size 16 --kv_layout NHD --input_dtype bfloat16 --refcheck\n"
           "--routine rope_quantize_fp8_append_paged_kv_cache --batch_size 5 --seq_len 77 --num_qo_heads 9 --num_kv_heads 3 "
           "--head_dim 128 --rotary_dim 64 --page_size 64 --kv_layout HND --quant_dtype fp8_e5m2 --refcheck\n"
           "--routine rope_quantize_fp8_append_paged_kv_cache --batch_size 2 --seq_len 33 --num_qo_heads 4 --num_kv_heads 1 "
           "--head_dim 64 --page_size 1 --kv_layout HND --interleave --refcheck\n";
  }
  const auto r = kbench::testing::run_kbench("--testlist " + list + " --backends cuda flashinfer -n 3");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("[INFO] Backends: 12 passed, 0 ran without refcheck, 0 incorrect, 0 not supported, 0 failed"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("[ERROR]"), std::string::npos) << r.output;
}

}  // namespace
