// moe_a2a_dispatch_combine on the host: the inputs as the reference draws them, the payloads on the
// wire, the reference's traffic formula, and the routine's checks of a command line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/rank_group.hpp"
#include "core/registry.hpp"
#include "kernels/quantization/block_formats.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/moe_comm/a2a_case.hpp"

namespace kbench {
namespace {

namespace quant = kernels::quant;

A2aProblem problem(A2aQuant quant, int ranks = 2) {
  A2aProblem p;
  p.tokens = 33;
  p.hidden = 256;
  p.experts = 16;
  p.top_k = 4;
  p.max_tokens = 40;
  p.quant = quant;
  p.ranks = ranks;
  return p;
}

TEST(A2aInputs, EachTokenHasDistinctExpertsAndItsRankItsOwnDraw) {
  const A2aProblem p = problem(A2aQuant::none);
  const A2aRankInputs r0 = draw_rank_inputs(p, 42, 0), again = draw_rank_inputs(p, 42, 0), r1 = draw_rank_inputs(p, 42, 1);
  EXPECT_EQ(r0.hidden, again.hidden);
  EXPECT_EQ(r0.expert_ids, again.expert_ids);
  EXPECT_NE(r0.hidden, r1.hidden);
  for (int64_t t = 0; t < p.tokens; ++t) {
    const std::set<int32_t> ids(r0.expert_ids.begin() + t * p.top_k, r0.expert_ids.begin() + (t + 1) * p.top_k);
    EXPECT_EQ(ids.size(), static_cast<std::size_t>(p.top_k));
    EXPECT_GE(*ids.begin(), 0);
    EXPECT_LT(*ids.rbegin(), p.experts);
  }
  for (const float w : r0.weights) {
    EXPECT_GE(w, 0.0f);
    EXPECT_LT(w, 1.0f);
  }
}

TEST(A2aInputs, PayloadsDecodeToTheTokens) {
  for (const A2aQuant q : {A2aQuant::none, A2aQuant::fp8, A2aQuant::fp8_block_scale, A2aQuant::nvfp4}) {
    SCOPED_TRACE(std::string(a2a_quant_name(q)));
    const A2aProblem p = problem(q);
    std::vector<A2aRankInputs> ranks = {draw_rank_inputs(p, 7, 0), draw_rank_inputs(p, 7, 1)};
    const A2aScales scales = a2a_scales(ranks);
    for (A2aRankInputs& in : ranks) quantize_payloads(p, scales, in);
    const A2aRankInputs& in = ranks[1];
    ASSERT_EQ(in.payloads[1].size(), static_cast<std::size_t>(p.tokens * p.top_k * 4));
    ASSERT_EQ(in.payloads[2].size(), static_cast<std::size_t>(p.tokens * p.top_k * 4));
    EXPECT_EQ(std::memcmp(in.payloads[1].data(), in.expert_ids.data(), in.payloads[1].size()), 0);
    double worst = 0;
    for (int64_t t = 0; t < p.tokens; ++t) {
      for (int64_t i = 0; i < p.hidden; ++i) {
        const float x = in.hidden[static_cast<std::size_t>(t * p.hidden + i)];
        float decoded = 0;
        switch (q) {
          case A2aQuant::none: {
            uint16_t bits;
            std::memcpy(&bits, in.payloads[0].data() + (t * p.hidden + i) * 2, 2);
            decoded = quant::bits_float(static_cast<uint32_t>(bits) << 16);
            break;
          }
          case A2aQuant::fp8:
            decoded = quant::e4m3_to_float(in.payloads[0][static_cast<std::size_t>(t * p.hidden + i)]) * scales.fp8_scale;
            break;
          case A2aQuant::fp8_block_scale: {
            float scale;
            std::memcpy(&scale, in.payloads[3].data() + (t * (p.hidden / 128) + i / 128) * 4, 4);
            decoded = quant::e4m3_to_float(in.payloads[0][static_cast<std::size_t>(t * p.hidden + i)]) * scale;
            break;
          }
          case A2aQuant::nvfp4: {
            const uint8_t byte = in.payloads[0][static_cast<std::size_t>((t * p.hidden + i) / 2)];
            const uint8_t code = i % 2 == 0 ? byte & 0xF : byte >> 4;
            const uint8_t sf = in.payloads[3][static_cast<std::size_t>((t * p.hidden + i) / 16)];
            decoded = quant::dequantize_element(quant::BlockFormat::nvfp4, code, sf, scales.nvfp4_global_scale);
            break;
          }
        }
        worst = std::max(worst, static_cast<double>(std::fabs(decoded - x)));
      }
    }
    // One step of each format at |x| < 5: bf16 exact here, e4m3 1/16 relative, e2m1 a block's amax / 6.
    const double bound = q == A2aQuant::none ? 0.0 : q == A2aQuant::nvfp4 ? 0.7 : 0.35;
    EXPECT_LE(worst, bound);
  }
}

TEST(A2aInputs, TrafficCountsEachTokenOncePerOtherRankOfItsExperts) {
  A2aProblem p = problem(A2aQuant::fp8);
  p.tokens = 2;
  p.top_k = 3;
  p.hidden = 256;
  std::vector<A2aRankInputs> ranks(2);
  // 16 experts over 2 ranks: 0-7 on rank 0, 8-15 on rank 1.
  ranks[0].expert_ids = {0, 1, 9, /**/ 2, 3, 4};  // token 0: rank 1 holds one; token 1: local only
  ranks[1].expert_ids = {0, 8, 10, /**/ 15, 1, 2};  // both tokens: rank 0 holds 1 and 2 experts
  const A2aTraffic fp8 = reference_traffic(p, ranks);
  EXPECT_DOUBLE_EQ(fp8.dispatch, (256 + 8) + (256 + 8) + (256 + 16));
  EXPECT_DOUBLE_EQ(fp8.combine, 3 * 256 * 2);
  p.quant = A2aQuant::nvfp4;
  EXPECT_DOUBLE_EQ(reference_traffic(p, ranks).dispatch, 3 * (128 + 16) + 32);
  // The reference's defect: fp8_block_scale counted as bf16 without its scales.
  p.quant = A2aQuant::fp8_block_scale;
  const A2aTraffic block = reference_traffic(p, ranks);
  EXPECT_DOUBLE_EQ(block.dispatch, 3 * 512 + 32);
  EXPECT_DOUBLE_EQ(block.fp8_block_wire, 3 * (256 + 8) + 32);
}

// A group of `size` ranks that never communicates: make_case only reads the rank and the size.
class FakeGroup final : public RankGroup {
 public:
  explicit FakeGroup(int size) : size_(size) {}
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] std::vector<double> max_over_ranks(std::span<const double> v) override { return {v.begin(), v.end()}; }
  [[nodiscard]] std::vector<std::vector<std::byte>> all_gather(std::span<const std::byte> b) override {
    return {std::vector<std::byte>(b.begin(), b.end())};
  }

 private:
  int size_;
};

TEST(A2aRoutine, RefusesExpertsThatTheRanksDoNotDivide) {
  const RoutineRegistry registry = make_builtin_registry();
  const Routine& routine = *registry.find("moe_a2a_dispatch_combine");
  FakeGroup three(3);
  set_rank_group(&three);
  const auto make = [&](const std::vector<std::string>& words) {
    std::vector<std::string> all = {"--routine", "moe_a2a_dispatch_combine"};
    all.insert(all.end(), words.begin(), words.end());
    return routine.make_case(parse_case(all, registry));
  };
  EXPECT_THROW((void)make({"--num_tokens", "8", "--hidden_size", "7168", "--num_experts", "256", "--top_k", "8"}), CaseError);
  EXPECT_NO_THROW((void)make({"--num_tokens", "8", "--hidden_size", "7168", "--num_experts", "255", "--top_k", "8"}));
  set_rank_group(nullptr);
  EXPECT_THROW((void)make({"--num_tokens", "8", "--hidden_size", "7168", "--num_experts", "8", "--top_k", "9"}), CaseError);
  EXPECT_THROW((void)make({"--num_tokens", "8", "--hidden_size", "200", "--num_experts", "8", "--top_k", "2",
                           "--quant_dtype", "fp8_block_scale"}),
               CaseError);
  EXPECT_THROW((void)make({"--num_tokens", "8", "--hidden_size", "256", "--num_experts", "8", "--top_k", "2",
                           "--max_num_tokens", "4"}),
               CaseError);
}

TEST(A2aRoutine, RealMathRefusesWhatTheLayerCannotTake) {
  const RoutineRegistry registry = make_builtin_registry();
  const Routine& routine = *registry.find("moe_a2a_dispatch_combine");
  const auto make = [&](const std::string& line) {
    std::vector<std::string> all = {"--routine", "moe_a2a_dispatch_combine", "--real_math", "--num_tokens", "8",
                                    "--num_experts", "16", "--top_k", "4"};
    std::istringstream words(line);
    for (std::string word; words >> word;) all.push_back(word);
    return routine.make_case(parse_case(all, registry));
  };
  const auto expect_refused = [&](const std::string& line, const std::string& why) {
    try {
      (void)make(line);
      ADD_FAILURE() << line << ": accepted";
    } catch (const CaseError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  expect_refused("--hidden_size 512 --quant_dtype fp8_block_scale", "--real_math needs --intermediate_size");
  expect_refused("--hidden_size 512 --intermediate_size 256", "--real_math needs --quant_dtype fp8_block_scale or nvfp4");
  expect_refused("--hidden_size 512 --intermediate_size 256 --quant_dtype fp8", "fp8_block_scale or nvfp4");
  expect_refused("--hidden_size 384 --intermediate_size 256 --quant_dtype fp8_block_scale",
                 "--hidden_size a multiple of 512");
  expect_refused("--hidden_size 320 --intermediate_size 256 --quant_dtype nvfp4", "--hidden_size a multiple of 256");
  expect_refused("--hidden_size 512 --intermediate_size 200 --quant_dtype fp8_block_scale",
                 "--intermediate_size a multiple of 128 up to 2^20");
  expect_refused("--hidden_size 512 --intermediate_size 9223372036854775807 --quant_dtype fp8_block_scale",
                 "--intermediate_size a multiple of 128 up to 2^20");
  EXPECT_NO_THROW((void)make("--hidden_size 512 --intermediate_size 256 --quant_dtype fp8_block_scale"));
  EXPECT_NO_THROW((void)make("--hidden_size 256 --intermediate_size 256 --quant_dtype nvfp4"));
}

// Sizes past the kernels' int32 slots are case errors (the testlist fuzzer's lines), not internal ones.
TEST(A2aRoutine, RefusesSizesPastTheWorkspacesInt32Slots) {
  const RoutineRegistry registry = make_builtin_registry();
  const Routine& routine = *registry.find("moe_a2a_dispatch_combine");
  for (const std::string tokens : {"2147483648", "9223372036854775807"}) {
    const std::vector<std::string> line = {"--routine", "moe_a2a_dispatch_combine", "--num_tokens", tokens,
                                           "--hidden_size", "7168", "--num_experts", "256", "--top_k", "8"};
    try {
      (void)routine.make_case(parse_case(line, registry));
      ADD_FAILURE() << tokens << " tokens: accepted";
    } catch (const CaseError& e) {
      EXPECT_NE(std::string(e.what()).find("over 2^31 - 1"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kbench
