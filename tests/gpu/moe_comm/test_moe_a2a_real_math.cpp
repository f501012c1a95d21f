// moe_a2a_dispatch_combine --real_math end to end through kbench with --refcheck: dispatch, the MoE
// layer of each rank's experts on kbench's MoE pipeline fed from the receive slots, combine; the
// output against the single-GPU fp32 layer of all experts over the rank's tokens (the MoE family's
// reference and tolerance), the received payloads bit for bit. One rank (every expert local, on any
// Hopper GPU): DeepSeek FP8 and NVFP4, odd token counts, spare slots (--max_num_tokens); bf16 only
// (trtllm's N(0, 1) weights take the outputs past fp16's range). Two ranks (`--nproc 2`, where two
// GPUs are present): both backends, so the expert stage reads kbench's stamped slots and NCCL's
// whole slot blocks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_test_support.hpp"

namespace kbench {
namespace {

const std::string kRoutine = "--routine moe_a2a_dispatch_combine --real_math ";

std::string lines_of(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += kRoutine + line + " --refcheck\n";
  return text;
}

#define KBENCH_REQUIRE_HOPPER()                                                                        \
  do {                                                                                                 \
    KBENCH_REQUIRE_GPU();                                                                              \
    if (!testing::device_is_sm90()) GTEST_SKIP() << "kbench's MoE pipeline is built for sm_90a only"; \
  } while (0)

TEST(MoeA2aRealMath, OneRankMatchesTheSingleGpuLayer) {
  KBENCH_REQUIRE_HOPPER();
  const std::vector<std::string> lines = {
      "--num_tokens 37 --hidden_size 512 --num_experts 16 --top_k 4 --intermediate_size 256 "
      "--quant_dtype fp8_block_scale",
      "--num_tokens 64 --hidden_size 1024 --num_experts 32 --top_k 8 --intermediate_size 384 "
      "--quant_dtype fp8_block_scale --max_num_tokens 80",
      "--num_tokens 29 --hidden_size 256 --num_experts 8 --top_k 2 --intermediate_size 256 --quant_dtype nvfp4",
      "--num_tokens 40 --hidden_size 512 --num_experts 16 --top_k 8 --intermediate_size 128 --quant_dtype nvfp4 "
      "--per_phase_timing",
  };
  testing::expect_testlist_passes(testing::write_testlist("a2a_real_math.txt", lines_of(lines)), "-n 2 -d 1",
                                  static_cast<int>(lines.size()));
}

TEST(MoeA2aRealMath, TwoRanksBothBackends) {
  KBENCH_REQUIRE_HOPPER();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 2) GTEST_SKIP() << "needs 2 GPUs, has " << devices;
  const std::vector<std::string> lines = {
      "--num_tokens 45 --hidden_size 512 --num_experts 16 --top_k 4 --intermediate_size 256 "
      "--quant_dtype fp8_block_scale --backends moe_a2a nccl",
      "--num_tokens 33 --hidden_size 256 --num_experts 32 --top_k 8 --intermediate_size 128 --quant_dtype nvfp4 "
      "--backends moe_a2a nccl",
  };
  testing::expect_testlist_passes(testing::write_testlist("a2a_real_math_2.txt", lines_of(lines)),
                                  "--nproc 2 -n 2 -d 1", 2 * static_cast<int>(lines.size()));
}

}  // namespace
}  // namespace kbench
