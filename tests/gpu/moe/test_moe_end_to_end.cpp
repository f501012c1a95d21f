// The MoE routines end to end through kbench with --refcheck (kbench's `cuda` pipeline against the
// case's fp32 reference of the layer and the routing's ids and weights bit for bit against the host
// routing, outputs poisoned first). trtllm_fp8_block_scale_moe: every routing method, top-k 1 and 8,
// E 8 to 256, SwiGLU and GeGLU, odd token counts, EP windows in which experts receive no token and
// tokens pick no local expert, the reference's sample lines and the DeepSeek-V3 layer at 128 tokens.
// trtllm_fp8_per_tensor_scale_moe (Llama 4's routing scales on the input, the dynamic per-tensor
// intermediate) and cutlass_fused_moe base and fp8 (fp16 and bf16, TP/EP simulation) likewise.
// trtllm_fp4_block_scale_moe (NVFP4 x, weights and intermediate) and cutlass_fused_moe nvfp4 (x
// quantized in the call or outside it) over the same kinds of lines; cute_dsl_fp4_block_scale_moe
// (the picks routed outside the call) likewise, and its per-stage split without the routing;
// b12x_fused_moe (512 experts, top-22, SwiGLU, tanh GeGLU and the non-gated Relu2, nvfp4 and w4a16).
// --per_stage_timing's split. The pipeline is Hopper's: skipped elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/csv.hpp"
#include "kernels/gemm/sm90/wgmma_gemm.hpp"

#include "gpu_test_support.hpp"

namespace kbench {
namespace {

const std::string kRoutine = "--routine trtllm_fp8_block_scale_moe ";
const std::string kPerTensor = "--routine trtllm_fp8_per_tensor_scale_moe ";
const std::string kCutlass = "--routine cutlass_fused_moe ";
const std::string kFp4 = "--routine trtllm_fp4_block_scale_moe ";
const std::string kCuteDsl = "--routine cute_dsl_fp4_block_scale_moe ";
const std::string kB12x = "--routine b12x_fused_moe ";

#define KBENCH_REQUIRE_HOPPER()                                                         \
  do {                                                                                  \
    KBENCH_REQUIRE_GPU();                                                               \
    if (!testing::device_is_sm90()) GTEST_SKIP() << "kbench's MoE pipeline is built for sm_90a only"; \
  } while (0)

void expect_lines_pass(const std::string& name, const std::vector<std::string>& lines,
                       const std::string& routine = kRoutine) {
  std::string text;
  for (const std::string& line : lines) text += routine + line + " --refcheck\n";
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

TEST(MoeEndToEnd, PerTensorFp8Routine) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_per_tensor.txt",
      {
          // the reference's sample line: llama4, top-1 of 128, the weight on the input
          "--num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 --num_experts 128 --top_k 1 "
          "--routed_scaling_factor 2.5 --use_routing_bias --routing_method llama4 --use_routing_scales_on_input",
          // llama4 with the weight in the sum; renormalize top-8 of 64 over odd sizes; deepseek_v3 GeGLU
          "--num_tokens 77 --hidden_size 256 --intermediate_size 384 --num_experts 16 --top_k 1 --routing_method llama4",
          "--num_tokens 201 --hidden_size 384 --intermediate_size 256 --num_experts 64 --top_k 8 --routing_method "
          "renormalize",
          "--num_tokens 64 --hidden_size 256 --intermediate_size 128 --num_experts 64 --top_k 8 --n_group 8 "
          "--topk_group 4 --use_routing_bias --routing_method deepseek_v3 --activation-type Geglu",
          // an EP window with idle experts
          "--num_tokens 9 --hidden_size 128 --intermediate_size 128 --num_experts 64 --top_k 2 --routing_method "
          "renormalize --local_expert_offset 32 --local_num_experts 16",
      },
      kPerTensor);
}

TEST(MoeEndToEnd, CutlassFusedMoeBaseAndFp8) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_cutlass.txt",
      {
          // the reference's sample lines (fp16): base, fp8, and base with TP 2 / EP 4 (a 64-wide shard)
          "--num_tokens 32 --hidden_size 128 --intermediate_size 128 --num_experts 2 --top_k 2 --cutlass_variant base "
          "--input_dtype float16",
          "--num_tokens 32 --hidden_size 128 --intermediate_size 128 --num_experts 2 --top_k 2 --cutlass_variant fp8 "
          "--input_dtype float16",
          "--num_tokens 32 --hidden_size 128 --intermediate_size 128 --num_experts 8 --top_k 2 --cutlass_variant base "
          "--input_dtype float16 --tp_size 2 --tp_rank 0 --ep_size 4 --ep_rank 0",
          // bf16, odd sizes, top-8 of 64, the last EP rank and TP shard; GeGLU
          "--num_tokens 333 --hidden_size 512 --intermediate_size 768 --num_experts 64 --top_k 8 "
          "--cutlass_variant base --tp_size 2 --tp_rank 1 --ep_size 2 --ep_rank 1",
          "--num_tokens 150 --hidden_size 384 --intermediate_size 256 --num_experts 32 --top_k 4 "
          "--cutlass_variant fp8 --activation-type Geglu --ep_size 4 --ep_rank 3",
          "--num_tokens 65 --hidden_size 256 --intermediate_size 384 --num_experts 8 --top_k 2 --cutlass_variant fp8 "
          "--input_dtype float16 --tp_size 3 --tp_rank 2",
      },
      kCutlass);
}

TEST(MoeEndToEnd, Fp4BlockScaleRoutine) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_fp4.txt",
      {
          // the reference's sample lines: deepseek_v3 top-8 of 256 with groups and the bias; renormalize_naive
          "--num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 --num_experts 256 --top_k 8 --n_group 8 "
          "--topk_group 4 --routed_scaling_factor 2.5 --use_routing_bias --routing_method deepseek_v3 "
          "--use_shuffled_weight",
          "--num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 --num_experts 128 --top_k 8 "
          "--routing_method renormalize_naive --use_shuffled_weight",
          // top-1 over odd token counts; GeGLU with raw-logit weights (topk)
          "--num_tokens 37 --hidden_size 384 --intermediate_size 256 --num_experts 8 --top_k 1 --routing_method "
          "renormalize",
          "--num_tokens 101 --hidden_size 256 --intermediate_size 384 --num_experts 64 --top_k 8 --routing_method topk "
          "--activation-type Geglu",
          "--num_tokens 50 --hidden_size 256 --intermediate_size 256 --num_experts 16 --top_k 1 --routing_method "
          "llama4",
          // EP windows: most local experts get no token, some tokens no local pick; one local expert
          "--num_tokens 5 --hidden_size 256 --intermediate_size 128 --num_experts 64 --top_k 2 "
          "--routing_method renormalize --local_expert_offset 48 --local_num_experts 16",
          "--num_tokens 300 --hidden_size 512 --intermediate_size 256 --num_experts 256 --top_k 8 --n_group 8 "
          "--topk_group 4 --use_routing_bias --local_expert_offset 96 --local_num_experts 32",
          // the MX modes: MXFP4 weights with MXFP8 or bf16 x and intermediate
          "--num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 --num_experts 128 --top_k 8 "
          "--routing_method renormalize_naive --fp4_mode mxfp4_mxfp8",
          "--num_tokens 77 --hidden_size 384 --intermediate_size 256 --num_experts 16 --top_k 1 --routing_method "
          "renormalize --fp4_mode mxfp4_mxfp8 --activation-type Geglu",
          "--num_tokens 5 --hidden_size 256 --intermediate_size 128 --num_experts 64 --top_k 2 --routing_method "
          "renormalize --local_expert_offset 48 --local_num_experts 16 --fp4_mode mxfp4_mxfp8",
          "--num_tokens 201 --hidden_size 512 --intermediate_size 384 --num_experts 64 --top_k 8 --n_group 8 "
          "--topk_group 4 --use_routing_bias --fp4_mode mxfp4_bf16",
          "--num_tokens 40 --hidden_size 128 --intermediate_size 128 --num_experts 8 --top_k 2 --routing_method "
          "renormalize --local_expert_offset 7 --local_num_experts 1 --fp4_mode mxfp4_bf16",
      },
      kFp4);
}

TEST(MoeEndToEnd, CutlassFusedMoeNvfp4) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_cutlass_nvfp4.txt",
      {
          // the reference's sample lines (fp16): x quantized in the call, and before it
          "--num_tokens 32 --hidden_size 128 --intermediate_size 128 --num_experts 2 --top_k 2 --cutlass_variant "
          "nvfp4 --input_dtype float16",
          "--num_tokens 32 --hidden_size 128 --intermediate_size 128 --num_experts 2 --top_k 2 --cutlass_variant "
          "nvfp4 --quantized_input --input_dtype float16",
          // bf16, odd sizes, top-8 of 64, the last EP rank and TP shard; fp16 GeGLU with x quantized before
          "--num_tokens 333 --hidden_size 512 --intermediate_size 512 --num_experts 64 --top_k 8 "
          "--cutlass_variant nvfp4 --tp_size 2 --tp_rank 1 --ep_size 2 --ep_rank 1",
          "--num_tokens 65 --hidden_size 256 --intermediate_size 384 --num_experts 8 --top_k 2 --cutlass_variant "
          "nvfp4 --quantized_input --input_dtype float16 --activation-type Geglu --ep_size 4 --ep_rank 3",
      },
      kCutlass);
}

TEST(MoeEndToEnd, CuteDslFp4Routine) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_cute_dsl.txt",
      {
          // the reference's sample lines: the small one, and the large one's EP window (32 of 256 experts)
          "--num_tokens 256 --hidden_size 1024 --intermediate_size 512 --num_experts 256 --top_k 2",
          "--num_tokens 1024 --hidden_size 7168 --intermediate_size 2048 --num_experts 256 --top_k 8 "
          "--local_expert_offset 0 --local_num_experts 32",
          // odd token counts, top-1 and top-8, an EP window where most experts get no token, one expert
          "--num_tokens 37 --hidden_size 384 --intermediate_size 256 --num_experts 8 --top_k 1 --autotune",
          "--num_tokens 101 --hidden_size 256 --intermediate_size 384 --num_experts 64 --top_k 8 --use_functional_api",
          "--num_tokens 5 --hidden_size 256 --intermediate_size 128 --num_experts 64 --top_k 2 "
          "--local_expert_offset 48 --local_num_experts 16",
          "--num_tokens 40 --hidden_size 128 --intermediate_size 128 --num_experts 8 --top_k 2 "
          "--local_expert_offset 7 --local_num_experts 1",
      },
      kCuteDsl);
}

TEST(MoeEndToEnd, B12xRoutine) {
  KBENCH_REQUIRE_HOPPER();
  expect_lines_pass(
      "moe_b12x.txt",
      {
          // the sample lines' shapes over 256 (and 128) of the 512 experts: top-22, SwiGLU and Relu2
          "--num_tokens 64 --hidden_size 1024 --intermediate_size 2688 --num_experts 512 --top_k 22 "
          "--local_num_experts 256",
          "--num_tokens 1 --hidden_size 1024 --intermediate_size 2688 --num_experts 512 --top_k 22 "
          "--local_num_experts 128 --activation-type Relu2",
          // tanh GeGLU; w4a16 (16-bit x and intermediate) gated and not; odd token counts, top-1
          "--num_tokens 21 --hidden_size 384 --intermediate_size 256 --num_experts 32 --top_k 4 --activation-type Geglu",
          "--num_tokens 37 --hidden_size 256 --intermediate_size 384 --num_experts 64 --top_k 8 --b12x_quant_mode w4a16",
          "--num_tokens 50 --hidden_size 256 --intermediate_size 256 --num_experts 16 --top_k 1 --activation-type Relu2 "
          "--b12x_quant_mode w4a16",
      },
      kB12x);
}

// The reference's b12x sample lines: 512 local experts in one grouped GEMM (kMaxDeviceGroups).
TEST(MoeEndToEnd, B12xSampleLines) {
  KBENCH_REQUIRE_HOPPER();
  if (kernels::gemm::sm90::kMaxDeviceGroups < 512) {
    GTEST_SKIP() << "kbench's grouped GEMM takes " << kernels::gemm::sm90::kMaxDeviceGroups << " device groups";
  }
  expect_lines_pass(
      "moe_b12x_samples.txt",
      {
          "--num_tokens 1024 --hidden_size 1024 --intermediate_size 2688 --num_experts 512 --top_k 22",
          "--num_tokens 1 --hidden_size 1024 --intermediate_size 2688 --num_experts 512 --top_k 22 --activation-type "
          "Relu2",
      },
      kB12x);
}

// cute_dsl_fp4_block_scale_moe routes outside the call: its split has no routing stage.
TEST(MoeEndToEnd, PerStageTimingWithoutTheRouting) {
  KBENCH_REQUIRE_HOPPER();
  const auto r = testing::run_kbench(kCuteDsl +
                                     "--num_tokens 256 --hidden_size 512 --intermediate_size 256 --num_experts 32 "
                                     "--top_k 4 -n 5 -d 1 --per_stage_timing");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("cuda stage permutation: median"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("cuda stage routing"), std::string::npos) << r.output;
}

// --per_stage_timing: the stages, in order, each timed (the CSV's stage_times and [INFO] lines);
// kbench's FC1 writes the DeepSeek FP8 activation from its epilogue: one stage for both.
TEST(MoeEndToEnd, PerStageTimingSplitsTheLayer) {
  KBENCH_REQUIRE_HOPPER();
  const std::string csv = ::testing::TempDir() + "moe_stages.csv";
  std::remove(csv.c_str());
  const auto r = testing::run_kbench(
      kRoutine + "--num_tokens 256 --hidden_size 512 --intermediate_size 256 --num_experts 32 --top_k 4 "
                 "--routing_method renormalize -n 5 -d 1 --per_stage_timing --output_path " + csv);
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("cuda stage fc1_activation: median"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cuda stages: "), std::string::npos) << r.output;
  std::ifstream in(csv);
  std::string header, row;
  ASSERT_TRUE(std::getline(in, header) && std::getline(in, row));
  const auto columns = parse_csv_line(header), fields = parse_csv_line(row);
  const auto at = std::find(columns.begin(), columns.end(), "stage_times");
  ASSERT_NE(at, columns.end());
  std::stringstream stages(fields.at(static_cast<std::size_t>(at - columns.begin())));
  std::vector<std::string> names;
  for (std::string stage; std::getline(stages, stage, ';');) {
    const auto colon = stage.find(':');
    ASSERT_NE(colon, std::string::npos) << stage;
    names.push_back(stage.substr(0, colon));
    EXPECT_GT(std::stod(stage.substr(colon + 1)), 0.0) << stage;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"routing", "permutation", "fc1_activation", "fc2", "combine"}));
}

}  // namespace
}  // namespace kbench
