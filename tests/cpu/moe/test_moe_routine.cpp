// trtllm_fp8_block_scale_moe without a GPU: the reference's flags and defaults, the validation
// messages, the reference's FLOP and byte formulas on a known case, the tensors a case describes,
// --help listing every flag, and the `trtllm` name answering as kbench's `cuda` pipeline.
#include <gtest/gtest.h>

#include <string>

#include "case_from_line.hpp"
#include "core/cli.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/moe/moe_case.hpp"

namespace kbench {
namespace {

namespace moe = kernels::moe;

const std::string kDeepSeek =
    "-R trtllm_fp8_block_scale_moe --num_tokens 16384 --hidden_size 7168 --intermediate_size 2048 --num_experts 256 "
    "--top_k 8 --n_group 8 --topk_group 4 --use_routing_bias";

class MoeRoutine : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();

  std::unique_ptr<Case> make(const std::string& line) { return testing::case_from_line(registry, line); }
  const MoeProblem& problem(const std::unique_ptr<Case>& c) { return static_cast<const MoeCase&>(*c).problem(); }
  std::string case_error(const std::string& line) { return testing::case_error_of(registry, line); }
};

TEST_F(MoeRoutine, DefaultsAreTheReferences) {
  const auto c = make(
      "-R trtllm_fp8_block_scale_moe --num_tokens 4 --hidden_size 256 --intermediate_size 128 "
      "--num_experts 16 --top_k 2");
  const MoeProblem& p = problem(c);
  EXPECT_EQ(p.routing.method, moe::RoutingMethod::deepseek_v3);
  EXPECT_EQ(p.routing.n_group, 0);  // None
  EXPECT_EQ(p.routing.topk_group, 0);
  EXPECT_FLOAT_EQ(p.routing.routed_scaling_factor, 2.5f);
  EXPECT_EQ(p.routing.local_expert_offset, 0);
  EXPECT_EQ(p.routing.local_num_experts, 16);  // None: all experts
  EXPECT_FALSE(p.routing_bias);
  EXPECT_EQ(p.activation, moe::GatedActivation::swiglu);
  EXPECT_EQ(p.logits_dtype, DType::float32);  // deepseek_v3's logits are fp32, the others' bf16
  EXPECT_TRUE(p.ignored_flags.empty());
}

TEST_F(MoeRoutine, FlagsReachTheProblem) {
  const auto c = make(
      "-R trtllm_fp8_block_scale_moe --num_tokens 32 --hidden_size 512 --intermediate_size 256 --num_experts 64 "
      "--top_k 4 --n_group 8 --topk_group 2 --routed_scaling_factor 1.5 --local_expert_offset 16 --local_num_experts 8 "
      "--use_routing_bias --activation-type geglu --routing_method deepseek_v3 --use_shuffled_weight --weight_layout "
      "2");
  const MoeProblem& p = problem(c);
  EXPECT_EQ(p.tokens, 32);
  EXPECT_EQ(p.hidden, 512);
  EXPECT_EQ(p.intermediate, 256);
  EXPECT_EQ(p.experts(), 64);
  EXPECT_EQ(p.top_k(), 4);
  EXPECT_EQ(p.routing.n_group, 8);
  EXPECT_EQ(p.routing.topk_group, 2);
  EXPECT_FLOAT_EQ(p.routing.routed_scaling_factor, 1.5f);
  EXPECT_EQ(p.routing.local_expert_offset, 16);
  EXPECT_EQ(p.local_experts(), 8);
  EXPECT_TRUE(p.routing_bias);
  EXPECT_EQ(p.activation, moe::GatedActivation::geglu);  // the reference's names, any case
  ASSERT_EQ(p.ignored_flags.size(), 2u);
  EXPECT_EQ(p.ignored_flags[0].first, "use_shuffled_weight");
  EXPECT_EQ(p.ignored_flags[1].first, "weight_layout");
  // Non-positive groups are None (the reference's rule); renormalize's logits are bf16; a bias
  // without deepseek_v3 is ignored.
  const auto r = make(
      "-R trtllm_fp8_block_scale_moe --num_tokens 4 --hidden_size 128 --intermediate_size 128 "
      "--num_experts 128 --top_k 1 --routing_method renormalize --n_group 0 --topk_group -1 "
      "--use_routing_bias");
  EXPECT_EQ(problem(r).routing.method, moe::RoutingMethod::renormalize);
  EXPECT_EQ(problem(r).routing.n_group, 0);
  EXPECT_EQ(problem(r).routing.topk_group, 0);
  EXPECT_EQ(problem(r).logits_dtype, DType::bfloat16);
  EXPECT_FALSE(problem(r).routing_bias);
  ASSERT_EQ(problem(r).ignored_flags.size(), 1u);
  EXPECT_EQ(problem(r).ignored_flags[0].first, "use_routing_bias");
}

TEST_F(MoeRoutine, RefusesWhatItCannotRun) {
  const std::string shape = " --num_tokens 4 --hidden_size 256 --intermediate_size 128 --num_experts 16 --top_k 2";
  const std::string r = "-R trtllm_fp8_block_scale_moe";
  EXPECT_NE(case_error(r + shape + " --activation-type Relu2").find("only the gated Swiglu and Geglu"),
            std::string::npos);
  EXPECT_NE(case_error(r + shape + " --activation-type Tanh").find("is not an activation type"), std::string::npos);
  EXPECT_NE(case_error(r + " --num_tokens 4 --hidden_size 200 --intermediate_size 128 --num_experts 16 --top_k 2")
                .find("--hidden_size 200 is not a multiple of 128"),
            std::string::npos);
  EXPECT_NE(case_error(r + " --num_tokens 4 --hidden_size 256 --intermediate_size 64 --num_experts 16 --top_k 2")
                .find("--intermediate_size 64 is not a multiple of 128"),
            std::string::npos);
  EXPECT_NE(case_error(r + " --num_tokens 0 --hidden_size 256 --intermediate_size 128 --num_experts 16 --top_k 2")
                .find("--num_tokens must be positive"),
            std::string::npos);
  EXPECT_NE(case_error(r + " --num_tokens 4 --hidden_size 256 --intermediate_size 128 --num_experts 1024 --top_k 2")
                .find("routing supports 1 to 512 experts"),
            std::string::npos);
  EXPECT_NE(case_error(r + shape + " --routing_method llama4").find("llama4 routing needs top_k = 1"),
            std::string::npos);
  EXPECT_NE(case_error(r + shape + " --n_group 3 --topk_group 1").find("n_group must divide the experts"),
            std::string::npos);
  EXPECT_NE(case_error(r + shape + " --local_expert_offset 12 --local_num_experts 8").find("local experts must lie"),
            std::string::npos);
  EXPECT_NE(case_error(r + shape + " --local_num_experts 0").find("--local_num_experts must be positive"),
            std::string::npos);
  EXPECT_NE(case_error(r + shape + " --input_dtype float16").find("--input_dtype float16 is not supported"),
            std::string::npos);
}

TEST_F(MoeRoutine, FormulasAreTheReferences) {
  // The DeepSeek-V3 layer: FLOPs T k (2 H 2I + 2 I H), whatever the local window.
  const double t = 16384, h = 7168, i = 2048, e = 256, k = 8;
  const auto c = make(kDeepSeek + " --local_expert_offset 32 --local_num_experts 32");
  EXPECT_DOUBLE_EQ(c->flops(), t * k * (2 * h * 2 * i + 2 * i * h));
  // Bytes before the inputs exist: A = min(E, T k); fp32 logits, fp8 x and weights, bf16 output.
  EXPECT_DOUBLE_EQ(c->bytes(), t * h + t * e * 4 + e * (2 * i * h + h * i) + t * h * 2);
  // With A known (bf16 logits for renormalize): the distinct experts picked.
  MoeProblem p =
      problem(make("-R trtllm_fp8_block_scale_moe --num_tokens 2 --hidden_size 128 --intermediate_size 256 "
                   "--num_experts 8 --top_k 1 --routing_method renormalize"));
  EXPECT_DOUBLE_EQ(moe_bytes(p, -1), 2 * 128 + 2 * 8 * 2 + 2 * (2 * 256 * 128 + 128 * 256) + 2 * 128 * 2);
  EXPECT_DOUBLE_EQ(moe_bytes(p, 1), 2 * 128 + 2 * 8 * 2 + 1 * (2 * 256 * 128 + 128 * 256) + 2 * 128 * 2);
  EXPECT_DOUBLE_EQ(moe_flops(p), 2.0 * 1 * (2 * 128 * 512 + 2 * 256 * 128));
}

TEST_F(MoeRoutine, TensorsHoldTheLocalExpertsOnly) {
  const auto c = make(kDeepSeek + " --local_expert_offset 32 --local_num_experts 32");
  const std::vector<TensorInfo> t = c->tensors();
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t[0].name, "routing_logits");
  EXPECT_EQ(t[0].shape, (std::vector<int64_t>{16384, 256}));
  EXPECT_EQ(t[1].name, "routing_bias");
  EXPECT_EQ(t[3].name, "gemm1_weights");
  EXPECT_EQ(t[3].shape, (std::vector<int64_t>{32, 4096, 7168}));
  EXPECT_EQ(t[4].shape, (std::vector<int64_t>{32, 32, 56}));
  EXPECT_EQ(t[5].shape, (std::vector<int64_t>{32, 7168, 2048}));
  EXPECT_EQ(t[6].shape, (std::vector<int64_t>{32, 56, 16}));
}

TEST_F(MoeRoutine, HelpListsTheReferenceFlags) {
  const std::string help = routine_help(*registry.find("trtllm_fp8_block_scale_moe"));
  for (const char* flag : {"--num_tokens",
                           "--hidden_size",
                           "--intermediate_size",
                           "--num_experts",
                           "--top_k",
                           "--n_group",
                           "--topk_group",
                           "--routed_scaling_factor",
                           "--local_expert_offset",
                           "--local_num_experts",
                           "--routing_method",
                           "--use_routing_bias",
                           "--activation-type",
                           "--input_dtype",
                           "--weight_dtype",
                           "--use_shuffled_weight",
                           "--weight_layout",
                           "--use_routing_scales_on_input",
                           "--fp4_mode",
                           "--cutlass_variant",
                           "--quantized_input",
                           "--tp_size",
                           "--tp_rank",
                           "--ep_size",
                           "--ep_rank"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
}

TEST_F(MoeRoutine, TrtllmIsAnAliasOfTheCudaPipeline) {
  const Routine* routine = registry.find("trtllm_fp8_block_scale_moe");
  ASSERT_NE(routine, nullptr);
  const Backend* trtllm = routine->find_backend("trtllm");
  ASSERT_NE(trtllm, nullptr);
  EXPECT_EQ(trtllm->name(), "cuda");
  EXPECT_EQ(routine->default_backends(), (std::vector<std::string>{"cuda"}));
  // The grouped GEMMs take the DeepSeek-V3 layer, the smallest shapes and 256 local experts.
  for (const std::string& line :
       {kDeepSeek, kDeepSeek + " --local_expert_offset 96 --local_num_experts 32",
        std::string("-R trtllm_fp8_block_scale_moe --num_tokens 5 --hidden_size 128 --intermediate_size 128 "
                    "--num_experts 8 --top_k 1 --routing_method renormalize")}) {
    const auto c = testing::case_from_line(registry, line);
    const Support s = trtllm->can_implement(*c);
    EXPECT_TRUE(s) << line << ": " << s.reason;
  }
  // The CSV column of --activation-type is the reference's activation_type.
  for (const FlagSpec& flag : routine->flags()) {
    if (flag.name == "activation-type") {
      EXPECT_EQ(routine->csv_column(flag), "activation_type");
    }
  }
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

class MoeOtherRoutines : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();

  const MoeProblem& problem(const std::string& line) {
    cases_.push_back(testing::case_from_line(registry, line));
    return static_cast<const MoeCase&>(*cases_.back()).problem();
  }
  std::string case_error(const std::string& line) { return testing::case_error_of(registry, line); }

 private:
  std::vector<std::unique_ptr<Case>> cases_;
};

// The reference's sample line of trtllm_fp8_per_tensor_scale_moe: x cast to e4m3 outside the call,
// per-tensor scales, llama4's bf16 logits and the weight on the input.
TEST_F(MoeOtherRoutines, PerTensorRoutineTakesTheReferenceInputs) {
  const MoeProblem& p = problem(
      "-R trtllm_fp8_per_tensor_scale_moe --num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 "
      "--num_experts 128 --top_k 1 --routed_scaling_factor 2.5 --use_routing_bias --routing_method llama4 "
      "--use_routing_scales_on_input");
  EXPECT_EQ(p.format, MoeFormat::fp8_per_tensor);
  EXPECT_TRUE(p.hidden_in_fp8);
  EXPECT_TRUE(p.routing_scales_on_input);
  EXPECT_EQ(p.logits_dtype, DType::bfloat16);  // llama4: bf16; the other methods fp32 (the block routine's opposite)
  EXPECT_EQ(p.w1_scale_count(), 128);          // one per expert
  ASSERT_EQ(p.ignored_flags.size(), 1u);       // a bias only deepseek_v3 reads
  EXPECT_EQ(p.ignored_flags[0].first, "use_routing_bias");
  EXPECT_EQ(problem("-R trtllm_fp8_per_tensor_scale_moe --num_tokens 4 --hidden_size 128 --intermediate_size 128 "
                    "--num_experts 8 --top_k 2 --routing_method renormalize")
                .logits_dtype,
            DType::float32);
  EXPECT_NE(case_error("-R trtllm_fp8_per_tensor_scale_moe --num_tokens 4 --hidden_size 128 --intermediate_size 128 "
                       "--num_experts 8 --top_k 2 --routing_method renormalize --use_routing_scales_on_input")
                .find("needs --routing_method llama4 and --top_k 1"),
            std::string::npos);
  // The block-scale routine does not take the weight on the input: warned about, ignored.
  EXPECT_FALSE(problem("-R trtllm_fp8_block_scale_moe --num_tokens 4 --hidden_size 128 --intermediate_size 128 "
                       "--num_experts 8 --top_k 1 --routing_method llama4 --use_routing_scales_on_input")
                   .routing_scales_on_input);
}

// cutlass_fused_moe: softmax top-k routing whatever --routing_method says, the variant's format, and
// TP/EP simulated: the rank's experts and its I/tp shard; the formulas count the whole layer.
TEST_F(MoeOtherRoutines, CutlassRoutineSimulatesTpAndEp) {
  const MoeProblem& p = problem(
      "-R cutlass_fused_moe --num_tokens 32 --hidden_size 128 --intermediate_size 128 --num_experts 8 --top_k 2 "
      "--cutlass_variant base --input_dtype float16 --tp_size 2 --tp_rank 1 --ep_size 4 --ep_rank 3 "
      "--routing_method deepseek_v3");
  EXPECT_EQ(p.format, MoeFormat::unquantized);
  EXPECT_EQ(p.input_dtype, DType::float16);
  EXPECT_EQ(p.logits_dtype, DType::float16);
  EXPECT_EQ(p.routing.method, moe::RoutingMethod::renormalize);
  EXPECT_EQ(p.routing.local_expert_offset, 6);
  EXPECT_EQ(p.local_experts(), 2);
  EXPECT_EQ(p.intermediate, 64);
  EXPECT_EQ(p.full_intermediate, 128);
  ASSERT_EQ(p.ignored_flags.size(), 1u);
  EXPECT_EQ(p.ignored_flags[0].first, "routing_method");
  // FLOPs with the full I; bytes with fp16 elements (base), A = min(E, T k) = 8.
  EXPECT_DOUBLE_EQ(moe_flops(p), 32.0 * 2 * (2 * 128 * 256 + 2 * 128 * 128));
  EXPECT_DOUBLE_EQ(moe_bytes(p, -1), 32.0 * 128 * 2 + 32 * 8 * 2 + 8 * (256 * 128 + 128 * 128) * 2.0 + 32 * 128 * 2);
  const MoeProblem& fp8 = problem("-R cutlass_fused_moe --num_tokens 32 --hidden_size 128 --intermediate_size 128 "
                                  "--num_experts 2 --top_k 2 --cutlass_variant fp8 --input_dtype float16");
  EXPECT_EQ(fp8.format, MoeFormat::fp8_per_tensor);
  EXPECT_FALSE(fp8.hidden_in_fp8);  // x is quantized in the call under its static scale
  EXPECT_EQ(problem("-R cutlass_fused_moe --num_tokens 32 --hidden_size 128 --intermediate_size 128 --num_experts 2 "
                    "--top_k 2 --cutlass_variant nvfp4 --quantized_input")
                .format,
            MoeFormat::nvfp4);
  const std::string shape = "-R cutlass_fused_moe --num_tokens 4 --hidden_size 128 --intermediate_size 128 --top_k 2";
  EXPECT_NE(case_error(shape + " --num_experts 6 --ep_size 4").find("--ep_size 4 must divide --num_experts 6"),
            std::string::npos);
  EXPECT_NE(case_error(shape + " --num_experts 8 --ep_size 4 --ep_rank 4").find("must lie in"), std::string::npos);
  EXPECT_NE(case_error(shape + " --num_experts 8 --input_dtype float32").find("takes bfloat16 or float16"),
            std::string::npos);
}

// trtllm_fp4_block_scale_moe's sample lines: NVFP4 x (outside the call) and weights, the logits'
// dtype by routing method, the shuffle flags recorded by the reference but never applied, the
// reference's formulas with nvfp4's 0.5625 bytes an element (input and weights).
TEST_F(MoeOtherRoutines, Fp4RoutineTakesTheReferenceInputs) {
  const MoeProblem& p = problem(
      "-R trtllm_fp4_block_scale_moe --num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 --num_experts 256 "
      "--top_k 8 --n_group 8 --topk_group 4 --routed_scaling_factor 2.5 --use_routing_bias --routing_method "
      "deepseek_v3 --use_shuffled_weight");
  EXPECT_EQ(p.format, MoeFormat::nvfp4);
  EXPECT_TRUE(p.hidden_block_quantized);
  EXPECT_TRUE(p.routing_bias);
  EXPECT_EQ(p.logits_dtype, DType::float32);  // deepseek_v3: fp32, the others bf16
  EXPECT_EQ(p.weight_dtype(), DType::uint8);
  EXPECT_EQ(p.activation_dtype(), DType::bfloat16);  // the GEMMs' A: NVFP4's values as bf16
  EXPECT_EQ(p.weight_bytes(p.w1_elements()), 256u * 2048 * 1024 / 2);
  EXPECT_EQ(p.w1_sf_bytes(), 2048 * 1024 / 16);  // 128x4 tiles: no padding at these sizes
  EXPECT_EQ(p.w1_scale_count(), 256);            // one global scale per expert
  ASSERT_EQ(p.ignored_flags.size(), 1u);
  EXPECT_EQ(p.ignored_flags[0].first, "use_shuffled_weight");
  EXPECT_NE(p.ignored_flags[0].second.find("never applies it"), std::string::npos);
  const double t = 1024, h = 1024, i = 1024, e = 256, k = 8;
  EXPECT_DOUBLE_EQ(moe_flops(p), t * k * (2 * h * 2 * i + 2 * i * h));
  EXPECT_DOUBLE_EQ(moe_bytes(p, 200), t * h * 0.5625 + t * e * 4 + 200 * (2 * i * h + h * i) * 0.5625 + t * h * 2);
  EXPECT_EQ(problem("-R trtllm_fp4_block_scale_moe --num_tokens 1024 --hidden_size 1024 --intermediate_size 1024 "
                    "--num_experts 128 --top_k 8 --routing_method renormalize_naive --use_shuffled_weight")
                .logits_dtype,
            DType::bfloat16);
  const std::string shape =
      "-R trtllm_fp4_block_scale_moe --num_tokens 4 --hidden_size 256 --intermediate_size 128 --num_experts 16 "
      "--top_k 2";
  EXPECT_TRUE(problem(shape + " --fp4_mode nvfp4").ignored_flags.empty());
  // bgmv_moe's flags, which the reference's MoE parser takes for every routine: warned about.
  EXPECT_EQ(problem(shape + " --rank 16 --num_loras 4 --num_slices 2").ignored_flags.size(), 3u);
  // The MX modes: MXFP4 weights (0.5 + 1/32 bytes), x MXFP8 (1 + 1/32) quantized outside the call,
  // or bf16 (2 bytes, gathered as it is).
  const MoeProblem& mxfp8 = problem(shape + " --fp4_mode mxfp4_mxfp8");
  EXPECT_EQ(mxfp8.format, MoeFormat::mxfp4_mxfp8);
  EXPECT_TRUE(mxfp8.hidden_block_quantized);
  EXPECT_EQ(mxfp8.weight_block(), 32);
  EXPECT_EQ(mxfp8.w1_scale_count(), 0);  // no global scales
  EXPECT_EQ(mxfp8.w1_sf_bytes(), 256 * 256 / 32);
  EXPECT_DOUBLE_EQ(moe_bytes(mxfp8, 3), 4 * 256 * 1.03125 + 4 * 16 * 4 + 3 * (256 * 256 + 256 * 128) * 0.53125 +
                                            4 * 256 * 2);
  const MoeProblem& bf16 = problem(shape + " --fp4_mode mxfp4_bf16");
  EXPECT_EQ(bf16.format, MoeFormat::mxfp4_bf16);
  EXPECT_FALSE(bf16.hidden_block_quantized);
  EXPECT_DOUBLE_EQ(moe_bytes(bf16, 3), 4 * 256 * 2.0 + 4 * 16 * 4 + 3 * (256 * 256 + 256 * 128) * 0.53125 + 4 * 256 * 2);
  EXPECT_ANY_THROW((void)problem(shape + " --fp4_mode fp8"));  // not one of the reference's choices
  EXPECT_NE(case_error("-R trtllm_fp4_block_scale_moe --num_tokens 4 --hidden_size 256 --intermediate_size 64 "
                       "--num_experts 16 --top_k 2")
                .find("64, is not a multiple of 128"),
            std::string::npos);
  // The tensors: packed pairs and e4m3 scale bytes.
  const std::vector<TensorInfo> tensors = testing::case_from_line(registry, shape)->tensors();
  ASSERT_EQ(tensors.size(), 7u);
  EXPECT_EQ(tensors[1].name, "hidden_states");
  EXPECT_EQ(tensors[1].shape, (std::vector<int64_t>{4, 128}));
  EXPECT_EQ(tensors[2].name, "hidden_states_scale");
  EXPECT_EQ(tensors[2].shape, (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(tensors[3].shape, (std::vector<int64_t>{16, 256, 128}));
  EXPECT_EQ(tensors[4].shape, (std::vector<int64_t>{16, 256, 16}));
  EXPECT_EQ(tensors[6].name, "gemm2_weights_scale");
}

// cutlass_fused_moe nvfp4: x quantized in the call, or outside it with --quantized_input; nvfp4's
// bytes for the input either way (the reference's formula); TP/EP as for the other variants.
TEST_F(MoeOtherRoutines, CutlassNvfp4Variant) {
  const std::string line =
      "-R cutlass_fused_moe --num_tokens 32 --hidden_size 128 --intermediate_size 128 --num_experts 2 --top_k 2 "
      "--cutlass_variant nvfp4 --input_dtype float16";
  const MoeProblem& p = problem(line);
  EXPECT_EQ(p.format, MoeFormat::nvfp4);
  EXPECT_FALSE(p.hidden_block_quantized);
  EXPECT_EQ(p.activation_dtype(), DType::float16);
  EXPECT_TRUE(p.ignored_flags.empty());
  EXPECT_DOUBLE_EQ(moe_bytes(p, -1), 32.0 * 128 * 0.5625 + 32 * 2 * 2 + 2 * (256 * 128 + 128 * 128) * 0.5625 +
                                         32 * 128 * 2);
  const MoeProblem& quantized = problem(line + " --quantized_input");
  EXPECT_TRUE(quantized.hidden_block_quantized);
  EXPECT_TRUE(quantized.ignored_flags.empty());
  const MoeProblem& sharded = problem(
      "-R cutlass_fused_moe --num_tokens 32 --hidden_size 128 --intermediate_size 256 --num_experts 8 --top_k 2 "
      "--cutlass_variant nvfp4 --tp_size 2 --tp_rank 1 --ep_size 4 --ep_rank 1");
  EXPECT_EQ(sharded.intermediate, 128);
  EXPECT_EQ(sharded.local_experts(), 2);
  EXPECT_NE(case_error("-R cutlass_fused_moe --num_tokens 32 --hidden_size 128 --intermediate_size 128 --num_experts "
                       "8 --top_k 2 --cutlass_variant nvfp4 --tp_size 2")
                .find("64, is not a multiple of 128"),
            std::string::npos);
}

// cute_dsl_fp4_block_scale_moe's sample lines: the picks routed outside the call (softmax top-k,
// renormalized, fp32 logits: no logits in the byte formula), NVFP4 x and weights, the EP window,
// SwiGLU only; the routing flags and --use_functional_api warned about, --autotune accepted.
// (That its case checks the output alone, the picks being inputs, needs the device: the GPU tests.)
TEST_F(MoeOtherRoutines, CuteDslRoutineRoutesOutsideTheCall) {
  const std::string line =
      "-R cute_dsl_fp4_block_scale_moe --num_tokens 1024 --hidden_size 7168 --intermediate_size 2048 --num_experts 256 "
      "--top_k 8";
  const MoeProblem& p = problem(line + " --local_expert_offset 0 --local_num_experts 32 --autotune");
  EXPECT_EQ(p.format, MoeFormat::nvfp4);
  EXPECT_EQ(p.inputs, MoeInputs::cute_dsl);
  EXPECT_FALSE(p.routing_in_call);
  EXPECT_TRUE(p.hidden_block_quantized);
  EXPECT_EQ(p.routing.method, moe::RoutingMethod::renormalize);
  EXPECT_EQ(p.logits_dtype, DType::float32);
  EXPECT_EQ(p.local_experts(), 32);
  EXPECT_TRUE(p.ignored_flags.empty());
  const double t = 1024, h = 7168, i = 2048, k = 8;
  EXPECT_DOUBLE_EQ(moe_flops(p), t * k * (2 * h * 2 * i + 2 * i * h));
  EXPECT_DOUBLE_EQ(moe_bytes(p, 250), t * h * 0.5625 + 250 * (2 * i * h + h * i) * 0.5625 + t * h * 2);
  const MoeProblem& flagged = problem(line + " --use_functional_api --routing_method deepseek_v3 --use_routing_bias");
  ASSERT_EQ(flagged.ignored_flags.size(), 3u);
  EXPECT_FALSE(flagged.routing_bias);
  EXPECT_EQ(flagged.routing.method, moe::RoutingMethod::renormalize);
  EXPECT_NE(case_error(line + " --activation-type Geglu").find("runs SwiGLU only"), std::string::npos);
}

// b12x_fused_moe's sample lines: 512 experts, top-22, picks routed outside the call, bf16 x (its
// formula counts 2 bytes whatever the mode), NVFP4 weights under global scale 1; Relu2 is
// non-gated (FC1 of I rows, FLOPs and bytes with w1 = I); Geglu runs as tanh GELU, as b12x maps it.
TEST_F(MoeOtherRoutines, B12xRoutineTakesTheReferenceInputs) {
  const std::string line =
      "-R b12x_fused_moe --num_tokens 1024 --hidden_size 1024 --intermediate_size 2688 --num_experts 512 --top_k 22";
  const MoeProblem& p = problem(line);
  EXPECT_EQ(p.format, MoeFormat::nvfp4);
  EXPECT_EQ(p.inputs, MoeInputs::b12x);
  EXPECT_FALSE(p.hidden_block_quantized);  // quantized in the call
  EXPECT_FALSE(p.routing_in_call);
  EXPECT_EQ(p.local_experts(), 512);
  EXPECT_EQ(p.activation, moe::GatedActivation::swiglu);
  EXPECT_EQ(p.w1_rows(), 2 * 2688);
  const double t = 1024, h = 1024, i = 2688, k = 22;
  EXPECT_DOUBLE_EQ(moe_flops(p), t * k * (2 * h * 2 * i + 2 * i * h));
  EXPECT_DOUBLE_EQ(moe_bytes(p, 500), t * h * 2 + 500 * (2 * i * h + h * i) * 0.5625 + t * h * 2);
  const MoeProblem& relu2 = problem(
      "-R b12x_fused_moe --num_tokens 1 --hidden_size 1024 --intermediate_size 2688 --num_experts 512 --top_k 22 "
      "--activation-type Relu2");
  EXPECT_EQ(relu2.activation, moe::GatedActivation::relu2);
  EXPECT_FALSE(relu2.gated());
  EXPECT_EQ(relu2.w1_rows(), 2688);
  EXPECT_EQ(relu2.w1_sf_bytes(), 2688 * 1024 / 16);
  EXPECT_DOUBLE_EQ(moe_flops(relu2), 1.0 * k * (2 * h * i + 2 * i * h));
  EXPECT_DOUBLE_EQ(moe_bytes(relu2, 22), 1.0 * h * 2 + 22 * (i * h + h * i) * 0.5625 + h * 2);
  EXPECT_EQ(problem(line + " --activation-type Geglu").activation, moe::GatedActivation::geglu_tanh);
  const MoeProblem& w4a16 = problem(line + " --b12x_quant_mode w4a16 --local_num_experts 256 --local_expert_offset 3");
  EXPECT_EQ(w4a16.format, MoeFormat::nvfp4_w4a16);
  EXPECT_EQ(w4a16.local_experts(), 256);
  EXPECT_EQ(w4a16.routing.local_expert_offset, 0);  // b12x takes none: warned about
  ASSERT_EQ(w4a16.ignored_flags.size(), 1u);
  EXPECT_EQ(w4a16.ignored_flags[0].first, "local_expert_offset");
  EXPECT_NE(case_error(line + " --activation-type Silu").find("b12x_fused_moe runs Swiglu, Geglu, GegluTanh and Relu2"),
            std::string::npos);
  // The other routines keep to the gated two.
  EXPECT_NE(case_error("-R trtllm_fp4_block_scale_moe --num_tokens 4 --hidden_size 256 --intermediate_size 128 "
                       "--num_experts 16 --top_k 2 --activation-type Relu2")
                .find("only the gated Swiglu and Geglu"),
            std::string::npos);
}

// Each routine answers to the reference's label of its one backend.
TEST_F(MoeOtherRoutines, ReferenceBackendLabels) {
  for (const auto& [routine, label] : {std::pair{"trtllm_fp8_per_tensor_scale_moe", "trtllm"},
                                       std::pair{"trtllm_fp4_block_scale_moe", "trtllm"},
                                       std::pair{"cute_dsl_fp4_block_scale_moe", "cute-dsl"},
                                       std::pair{"b12x_fused_moe", "b12x"},
                                       std::pair{"cutlass_fused_moe", "cutlass"}}) {
    const Backend* backend = registry.find(routine)->find_backend(label);
    ASSERT_NE(backend, nullptr) << routine;
    EXPECT_EQ(backend->name(), "cuda");
  }
}

}  // namespace
}  // namespace kbench
