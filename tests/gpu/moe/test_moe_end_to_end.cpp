// trtllm_fp8_block_scale_moe end to end through kbench with --refcheck (kbench's `cuda` pipeline
// against the case's fp32 reference of the layer and the routing's ids and weights bit for bit
// against the host routing, outputs poisoned first): every routing method,
// top-k 1 and 8, E 8 to 256, SwiGLU and GeGLU, odd token counts, EP windows in which experts receive
// no token and tokens pick no local expert, the reference's sample lines and the DeepSeek-V3 layer
// at 128 tokens. The pipeline is Hopper's: skipped elsewhere.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_test_support.hpp"

namespace kbench {
namespace {

const std::string kRoutine = "--routine trtllm_fp8_block_scale_moe ";

bool on_hopper() {
  int device = 0, major = 0, minor = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
         minor == 0;
}

#define KBENCH_REQUIRE_HOPPER()                                                         \
  do {                                                                                  \
    KBENCH_REQUIRE_GPU();                                                               \
    if (!on_hopper()) GTEST_SKIP() << "kbench's MoE pipeline is built for sm_90a only"; \
  } while (0)

void expect_lines_pass(const std::string& name, const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += kRoutine + line + " --refcheck\n";
  testing::expect_testlist_passes(testing::write_testlist(name, text), "-n 2 -d 1", static_cast<int>(lines.size()));
}

TEST(MoeEndToEnd, EveryRoutingMethod) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_routing.txt",
      {
          // deepseek_v3 with groups and the bias, top-8 of 64 (8 groups of 8, 4 kept)
          "--num_tokens 64 --hidden_size 256 --intermediate_size 128 --num_experts 64 --top_k 8 --n_group 8 "
          "--topk_group 4 --use_routing_bias --routing_method deepseek_v3",
          // deepseek_v3 without groups, GeGLU
          "--num_tokens 33 --hidden_size 384 --intermediate_size 256 --num_experts 16 --top_k 4 "
          "--routing_method deepseek_v3 --activation-type Geglu",
          // renormalize, top-1 of 8 (the fewest experts)
          "--num_tokens 37 --hidden_size 384 --intermediate_size 256 --num_experts 8 --top_k 1 --routing_method "
          "renormalize",
          // renormalize_naive, top-8 of 256 (the most experts: groups of one or two rows, many empty)
          "--num_tokens 100 --hidden_size 128 --intermediate_size 128 --num_experts 256 --top_k 8 "
          "--routing_method renormalize_naive",
          // topk (raw logits as weights, negative ones included), llama4 (top-1, sigmoid weight)
          "--num_tokens 16 --hidden_size 256 --intermediate_size 384 --num_experts 32 --top_k 4 --routing_method topk",
          "--num_tokens 50 --hidden_size 256 --intermediate_size 128 --num_experts 16 --top_k 1 --routing_method "
          "llama4",
      });
}

TEST(MoeEndToEnd, ExpertParallelWindows) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_ep.txt",
      {
          // 5 tokens x 2 picks over 64 experts, 16 local: most local experts get no token, some tokens
          // no local pick (their output rows are zeros)
          "--num_tokens 5 --hidden_size 256 --intermediate_size 128 --num_experts 64 --top_k 2 "
          "--routing_method renormalize --local_expert_offset 48 --local_num_experts 16",
          // DeepSeek routing, the middle 32 of 256 experts
          "--num_tokens 300 --hidden_size 512 --intermediate_size 256 --num_experts 256 --top_k 8 --n_group 8 "
          "--topk_group 4 --use_routing_bias --local_expert_offset 96 --local_num_experts 32",
          // one local expert
          "--num_tokens 40 --hidden_size 128 --intermediate_size 128 --num_experts 8 --top_k 2 "
          "--routing_method renormalize --local_expert_offset 7 --local_num_experts 1",
      });
}

TEST(MoeEndToEnd, ReferenceSampleLinesAndTrtllmName) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_samples.txt",
      {
          "--num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 --num_experts 256 --top_k 8 --n_group 8 "
          "--topk_group 4 --routed_scaling_factor 2.5 --use_routing_bias --routing_method deepseek_v3 "
          "--use_shuffled_weight",
          "--num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 --num_experts 128 --top_k 1 "
          "--routing_method renormalize --use_shuffled_weight --backends trtllm",
      });
}

TEST(MoeEndToEnd, DeepSeekV3LayerAt128Tokens) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_deepseek.txt",
      {
          "--num_tokens 128 --hidden_size 7168 --intermediate_size 2048 --num_experts 256 --top_k 8 --n_group 8 "
          "--topk_group 4 --routed_scaling_factor 2.5 --use_routing_bias --routing_method deepseek_v3",
      });
}

}  // namespace
}  // namespace kbench
