#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/refcheck.hpp"

namespace kbench {
namespace {

TEST(Refcheck, CountsLikeTorchIsclose) {
  const std::vector<float> ref = {1.0f, 2.0f, -3.0f, 100.0f};
  const std::vector<float> out = {1.015f, 2.05f, -3.0f, 101.0f};
  // allowed: 0.01 + 0.01 * |ref| -> 0.02, 0.03, 0.04, 1.01
  const Comparison c = compare_isclose("output", ref, out, {0.01, 0.01});
  EXPECT_EQ(c.total, 4);
  EXPECT_EQ(c.mismatches, 1);  // only 2.05 vs 2.0
  EXPECT_NEAR(c.max_abs_error, 1.0, 1e-6);
  EXPECT_DOUBLE_EQ(c.mismatch_percent(), 25.0);
}

TEST(Refcheck, NanAndInfinityInTheOutputFail) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> ref = {1.0f, 1.0f, inf};
  const std::vector<float> out = {nan, inf, inf};
  const Comparison c = compare_isclose("output", ref, out, {0.5, 0.5});
  EXPECT_EQ(c.mismatches, 2);  // matching infinities agree
}

TEST(Refcheck, SizeMismatchThrows) {
  const std::vector<float> a(3), b(4);
  EXPECT_THROW((void)compare_isclose("x", a, b, {}), std::invalid_argument);
}

TEST(Refcheck, Fp8GridStep) {
  EXPECT_DOUBLE_EQ(fp8_grid_step(DType::fp8_e4m3, 1.0), 0.125);
  EXPECT_DOUBLE_EQ(fp8_grid_step(DType::fp8_e4m3, 1.9), 0.125);
  EXPECT_DOUBLE_EQ(fp8_grid_step(DType::fp8_e4m3, 2.0), 0.25);
  EXPECT_DOUBLE_EQ(fp8_grid_step(DType::fp8_e4m3, 300.0), 32.0);
  EXPECT_DOUBLE_EQ(fp8_grid_step(DType::fp8_e4m3, 1e-4), std::ldexp(1.0, -9));  // subnormal
  EXPECT_DOUBLE_EQ(fp8_grid_step(DType::fp8_e5m2, 1.0), 0.25);
  EXPECT_DOUBLE_EQ(fp8_grid_step(DType::fp8_e5m2, -5.0), 1.0);
  EXPECT_DOUBLE_EQ(fp8_max_finite(DType::fp8_e4m3), 448.0);
  EXPECT_DOUBLE_EQ(fp8_max_finite(DType::fp8_e5m2), 57344.0);
  EXPECT_THROW((void)fp8_grid_step(DType::bfloat16, 1.0), std::invalid_argument);
}

TEST(Refcheck, QuantizedAllowsOneGridStep) {
  // 6.9 lies between the e5m2 values 6 and 7: one step (1.0) either way is accepted.
  const std::vector<float> ref = {6.9f, 0.5f};
  EXPECT_EQ(compare_quantized("output", ref, std::vector<float>{6.0f, 0.5f}, {0.1, 0.1}, DType::fp8_e5m2).mismatches, 0);
  // Two steps off is not: allowed 0.1 + 0.69 + 1.0 < |10 - 6.9|.
  EXPECT_EQ(compare_quantized("output", ref, std::vector<float>{10.0f, 0.5f}, {0.1, 0.1}, DType::fp8_e5m2).mismatches, 1);
}

TEST(Refcheck, QuantizedComparesWithTheSaturatedReference) {
  const std::vector<float> ref = {1000.0f, -1000.0f};
  const std::vector<float> out = {448.0f, -448.0f};
  EXPECT_EQ(compare_quantized("output", ref, out, {0.1, 0.1}, DType::fp8_e4m3).mismatches, 0);  // e4m3 max is 448
  EXPECT_EQ(compare_quantized("output", ref, out, {0.1, 0.1}, DType::fp8_e5m2).mismatches, 2);  // e5m2 holds 1000
}

TEST(Refcheck, CosineSimilarity) {
  const std::vector<float> a = {1, 2, 3};
  const std::vector<float> b = {2, 4, 6};
  const std::vector<float> c = {-1, -2, -3};
  EXPECT_NEAR(cosine_similarity(a, b), 1.0, 1e-12);
  EXPECT_NEAR(cosine_similarity(a, c), -1.0, 1e-12);
}

TEST(Refcheck, ResultPassesOnlyWithComparisonsAndNoMismatch) {
  RefcheckResult r;
  EXPECT_FALSE(r.passed());
  r.comparisons.push_back({"output", {0.01, 0.01}, 10, 0, 0.0});
  EXPECT_TRUE(r.passed());
  r.comparisons.push_back({"residual", {0.01, 0.01}, 10, 1, 0.5});
  EXPECT_FALSE(r.passed());
}

}  // namespace
}  // namespace kbench
