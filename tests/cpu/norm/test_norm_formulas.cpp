#include <gtest/gtest.h>

#include "core/cli.hpp"
#include "core/shell_words.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/norm/norm_case.hpp"

#include "case_from_line.hpp"

namespace kbench {
namespace {

NormProblem problem(NormVariant v, DType in, DType out) {
  NormProblem p;
  p.variant = v;
  p.batch_size = 8192;
  p.hidden_size = 8192;
  p.input_dtype = in;
  p.out_dtype = out;
  return p;
}

TEST(NormFormulas, MatchCompat) {
  const double n = 8192.0 * 8192.0, h = 8192.0;
  EXPECT_DOUBLE_EQ(norm_bytes(problem(NormVariant::rmsnorm, DType::bfloat16, DType::bfloat16)), 2 * n * 2 + h * 2);
  EXPECT_DOUBLE_EQ(norm_flops(problem(NormVariant::rmsnorm, DType::bfloat16, DType::bfloat16)), 5 * n);
  EXPECT_DOUBLE_EQ(norm_bytes(problem(NormVariant::gemma_rmsnorm, DType::float16, DType::float16)), 2 * n * 2 + h * 2);
  EXPECT_DOUBLE_EQ(norm_bytes(problem(NormVariant::fused_add_rmsnorm, DType::bfloat16, DType::bfloat16)), 4 * n * 2 + h * 2);
  EXPECT_DOUBLE_EQ(norm_flops(problem(NormVariant::fused_add_rmsnorm, DType::bfloat16, DType::bfloat16)), 6 * n);
  EXPECT_DOUBLE_EQ(norm_bytes(problem(NormVariant::rmsnorm_quant, DType::bfloat16, DType::fp8_e4m3)), n * 2 + h * 2 + n);
  EXPECT_DOUBLE_EQ(norm_bytes(problem(NormVariant::fused_add_rmsnorm_quant, DType::float16, DType::fp8_e5m2)),
                   3 * n * 2 + h * 2 + n);
  EXPECT_DOUBLE_EQ(norm_flops(problem(NormVariant::fused_add_rmsnorm_quant, DType::float16, DType::fp8_e5m2)), 6 * n);
}

TEST(NormFormulas, ThreeDimensionalShapeCountsHeads) {
  NormProblem p = problem(NormVariant::rmsnorm, DType::bfloat16, DType::bfloat16);
  p.batch_size = 4;
  p.num_heads = 32;
  p.hidden_size = 128;
  EXPECT_EQ(p.rows(), 128);
  EXPECT_DOUBLE_EQ(norm_bytes(p), 2.0 * 4 * 32 * 128 * 2 + 128 * 2);
}

class NormValidation : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();
  std::string case_error(const std::string& line) { return testing::case_error_of(registry, line); }
};

TEST_F(NormValidation, RejectsZeroNegativeAndAbsurdSizes) {
  EXPECT_NE(case_error("-R rmsnorm --batch_size 0 --hidden_size 8").find("--batch_size must be positive, got 0"), std::string::npos);
  EXPECT_NE(case_error("-R rmsnorm --batch_size 2 --hidden_size -8").find("--hidden_size must be positive, got -8"), std::string::npos);
  EXPECT_NE(case_error("-R rmsnorm --batch_size 2 --num_heads 0 --hidden_size 8").find("--num_heads"), std::string::npos);
  EXPECT_NE(case_error("-R rmsnorm --batch_size 1000000000 --hidden_size 1000000000").find("over 2^40 elements"), std::string::npos);
  EXPECT_NE(case_error("-R rmsnorm --batch_size 1 --hidden_size 8 --eps -1").find("--eps"), std::string::npos);
  EXPECT_NE(case_error("-R rmsnorm_quant --batch_size 1 --hidden_size 8 --scale 0").find("--scale must be positive"), std::string::npos);
  EXPECT_NE(case_error("-R rmsnorm_quant --batch_size 1 --hidden_size 8 --out_dtype nvfp4").find("FP4"), std::string::npos);
  // Values a float cannot hold became inf (or 0) on their way to the kernels.
  EXPECT_NE(case_error("-R rmsnorm --batch_size 1 --hidden_size 8 --eps 1e39").find("beyond float's range"), std::string::npos);
  EXPECT_NE(case_error("-R rmsnorm_quant --batch_size 1 --hidden_size 8 --scale 1e39").find("beyond float's range"),
            std::string::npos);
  EXPECT_NE(case_error("-R rmsnorm_quant --batch_size 1 --hidden_size 8 --scale 1e-50").find("beyond float's range"),
            std::string::npos);
}

TEST_F(NormValidation, SubnormalValuesParse) {
  // std::stod refused 1e-310 after the CLI had accepted it ("[ERROR] stod").
  const auto words = split_shell_words("-R rmsnorm --batch_size 1 --hidden_size 8 --eps 1e-310");
  const CaseArgs args = parse_case(words, registry);
  EXPECT_NO_THROW((void)registry.find("rmsnorm")->make_case(args));
}

TEST_F(NormValidation, AcceptsTheReferenceFlagsEverywhere) {
  for (const auto& r : registry.all()) {
    if (r->family() != "norm") continue;
    // The FP4 routines need whole scale blocks (hidden a multiple of 16 or 32, at least 64).
    const bool fp4 = std::string(r->name()).find("fp4quant") != std::string::npos;
    const std::string line = "-R " + std::string(r->name()) + " --batch_size 2 --num_heads 3 --hidden_size " +
                             (fp4 ? "128" : "100") + " --input_dtype float16 --eps 1e-5";
    const auto words = split_shell_words(line);
    const CaseArgs args = parse_case(words, registry);
    const auto c = r->make_case(args);
    EXPECT_GT(c->bytes(), 0) << line;
    EXPECT_GT(c->bytes_per_copy(), 0u) << line;
  }
}

}  // namespace
}  // namespace kbench
