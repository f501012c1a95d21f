// trtllm_fp8_block_scale_moe's `cutlass` backend end to end through kbench with --refcheck: CUTLASS's
// grouped FP8 blockwise GEMM inside kbench's pipeline against the fp32 reference of the layer, with
// experts that get no token, odd token counts, an EP window, top-1 and top-8, and kbench's `cuda`
// in the same run. Built where CUTLASS is (test_cutlass_*); Hopper only.
#include <gtest/gtest.h>

#include <string>

#include "gpu_test_support.hpp"

namespace kbench {
namespace {

TEST(MoeCutlassBackend, MatchesTheReferenceBesideKbenchsPipeline) {
  KBENCH_REQUIRE_GPU();
  if (!testing::device_is_sm90()) GTEST_SKIP() << "kbench's CUTLASS MoE GEMM is built for sm_90a only";
  const std::string routine = "--routine trtllm_fp8_block_scale_moe --backends cuda cutlass --refcheck ";
  const std::string lines[] = {
      "--num_tokens 100 --hidden_size 128 --intermediate_size 128 --num_experts 256 --top_k 8 "
      "--routing_method renormalize_naive",
      "--num_tokens 37 --hidden_size 384 --intermediate_size 256 --num_experts 8 --top_k 1 --routing_method renormalize",
      "--num_tokens 300 --hidden_size 512 --intermediate_size 256 --num_experts 256 --top_k 8 --n_group 8 "
      "--topk_group 4 --use_routing_bias --local_expert_offset 96 --local_num_experts 32",
      "--num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 --num_experts 256 --top_k 8 --n_group 8 "
      "--topk_group 4 --routed_scaling_factor 2.5 --use_routing_bias --routing_method deepseek_v3",
  };
  std::string text;
  for (const std::string& line : lines) text += routine + line + "\n";
  testing::expect_testlist_passes(testing::write_testlist("moe_cutlass_backend.txt", text), "-n 2 -d 1", 8);
}

}  // namespace
}  // namespace kbench
