// The RoPE routines without a GPU: the reference's flags, defaults and byte formulas, validation
// messages, the tensors a case describes, and the host reference on hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "routines/builtin_routines.hpp"
#include "routines/rope/rope_case.hpp"
#include "routines/rope/rope_reference.hpp"

#include "case_from_line.hpp"

namespace kbench {
namespace {

namespace ref = rope_reference;

class RopeRoutines : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();

  std::unique_ptr<Case> make(const std::string& line) { return testing::case_from_line(registry, line); }
  const RopeProblem& problem(const std::unique_ptr<Case>& c) { return static_cast<const RopeCase&>(*c).problem(); }
  std::string case_error(const std::string& line) { return testing::case_error_of(registry, line); }
};

constexpr const char* kShape = " --batch_size 16 --seq_len 1024 --num_qo_heads 32 --num_kv_heads 8 --head_dim 128";

TEST_F(RopeRoutines, BytesAreTheReferencesFormulas) {
  const double t = 16.0 * 1024.0;
  const double q_and_k = 2.0 * t * (32 + 8) * 128 * 2;
  EXPECT_DOUBLE_EQ(make(std::string("-R apply_rope") + kShape)->bytes(), q_and_k);
  EXPECT_DOUBLE_EQ(make(std::string("-R apply_llama31_rope") + kShape + " --input_dtype bfloat16")->bytes(), q_and_k);
  EXPECT_DOUBLE_EQ(make(std::string("-R apply_rope_pos_ids") + kShape)->bytes(), q_and_k + 4 * t);
  EXPECT_DOUBLE_EQ(make(std::string("-R apply_llama31_rope_pos_ids") + kShape)->bytes(), q_and_k + 4 * t);
  // The cache counted as the fp32 table kbench builds (the reference's intended formula counts it
  // in the input dtype, which its API refuses).
  EXPECT_DOUBLE_EQ(make(std::string("-R apply_rope_with_cos_sin_cache") + kShape)->bytes(),
                   q_and_k + 1024.0 * 128 * 4 + 8 * t);
  // Full head dim even when only part of it rotates.
  EXPECT_DOUBLE_EQ(make(std::string("-R apply_rope") + kShape + " --rotary_dim 64")->bytes(), q_and_k);
  EXPECT_DOUBLE_EQ(make(std::string("-R apply_rope") + kShape)->flops(), 0.0);
}

TEST_F(RopeRoutines, DefaultsAreTheReferences) {
  const auto plain = make(std::string("-R apply_rope") + kShape);
  const RopeProblem& p = problem(plain);
  EXPECT_EQ(p.rotary_dim, 128);
  EXPECT_EQ(p.dtype, DType::float16);
  EXPECT_FALSE(p.interleave);
  EXPECT_DOUBLE_EQ(p.frequencies.theta, 1e4);
  EXPECT_DOUBLE_EQ(p.frequencies.scale, 1.0);
  EXPECT_FALSE(p.frequencies.llama31);
  // The bench's own theta and scale reach the llama31 routines too (not the library's 5e5 and 8).
  const auto llama_case = make(std::string("-R apply_llama31_rope") + kShape);
  const RopeProblem& llama = problem(llama_case);
  EXPECT_TRUE(llama.frequencies.llama31);
  EXPECT_DOUBLE_EQ(llama.frequencies.theta, 1e4);
  EXPECT_DOUBLE_EQ(llama.frequencies.scale, 1.0);
  EXPECT_DOUBLE_EQ(llama.frequencies.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(llama.frequencies.high_freq_factor, 4.0);
  EXPECT_DOUBLE_EQ(llama.frequencies.old_context_len, 8192.0);
}

TEST_F(RopeRoutines, FlagsReachTheKernelsParameters) {
  const kernels::RopeParams s =
      problem(make(std::string("-R apply_rope_pos_ids") + kShape +
                   " --rotary_dim 64 --interleave --input_dtype bfloat16 --rope_theta 500000 --rope_scale 2"))
          .shape();
  EXPECT_EQ(s.position_source, kernels::RopePositions::pos_ids);
  EXPECT_EQ(s.tokens, 16 * 1024);
  EXPECT_EQ(s.rotary_dim, 64);
  EXPECT_TRUE(s.interleave);
  EXPECT_EQ(s.dtype, DType::bfloat16);
  EXPECT_FLOAT_EQ(s.rope_theta, 5e5f);
  EXPECT_FLOAT_EQ(s.rope_scale, 2.0f);
  EXPECT_EQ(s.smooth_a, 0.0f);  // plain RoPE: no blend
  EXPECT_EQ(s.smooth_b, 0.0f);
  EXPECT_EQ(problem(make(std::string("-R apply_rope") + kShape)).shape().position_source,
            kernels::RopePositions::request_offsets);
  const kernels::RopeParams cached = problem(make(std::string("-R apply_rope_with_cos_sin_cache") + kShape)).shape();
  EXPECT_EQ(cached.position_source, kernels::RopePositions::positions_i64);
  EXPECT_EQ(cached.cache_rows, 1024);
  const kernels::RopeParams llama = problem(make(std::string("-R apply_llama31_rope") + kShape)).shape();
  EXPECT_FLOAT_EQ(llama.smooth_a, static_cast<float>(8192.0 / (2 * std::numbers::pi * 3.0)));
  EXPECT_FLOAT_EQ(llama.smooth_b, -1.0f / 3.0f);
}

TEST_F(RopeRoutines, PositionsRestartInEveryRequest) {
  EXPECT_EQ(problem(make("-R apply_rope --batch_size 3 --seq_len 4 --num_qo_heads 1 --num_kv_heads 1 --head_dim 16")).positions(), (std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
}

TEST_F(RopeRoutines, TensorsAreDescribed) {
  const auto t = make("-R apply_rope --batch_size 2 --seq_len 5 --num_qo_heads 4 --num_kv_heads 2 --head_dim 64")->tensors();
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0].shape, (std::vector<int64_t>{10, 4, 64}));
  EXPECT_EQ(t[1].shape, (std::vector<int64_t>{10, 2, 64}));
  EXPECT_EQ(t[2].name, "indptr");
  EXPECT_EQ(t[2].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(t[3].name, "offsets");
  const auto cached =
      make("-R apply_rope_with_cos_sin_cache --batch_size 2 --seq_len 5 --num_qo_heads 4 --num_kv_heads 2 --head_dim 64 --rotary_dim 32")
          ->tensors();
  ASSERT_EQ(cached.size(), 6u);
  EXPECT_EQ(cached[0].shape, (std::vector<int64_t>{10, 4 * 64}));  // flattened, as the API takes them
  EXPECT_EQ(cached[2].dtype, DType::int64);
  EXPECT_EQ(cached[3].name, "cos_sin_cache");
  EXPECT_EQ(cached[3].shape, (std::vector<int64_t>{5, 32}));
  EXPECT_EQ(cached[3].dtype, DType::float32);
}

TEST_F(RopeRoutines, ValidationNamesTheFlag) {
  const std::string base = "-R apply_rope --batch_size 2 --seq_len 4 --num_qo_heads 4 --num_kv_heads 2";
  EXPECT_NE(case_error(base + " --head_dim 0").find("--head_dim must be positive, got 0"), std::string::npos);
  EXPECT_NE(case_error(base + " --head_dim 60").find("--head_dim must be a multiple of 8"), std::string::npos);
  EXPECT_NE(case_error(base + " --head_dim 64 --rotary_dim 24").find("--rotary_dim must be a multiple of 16"), std::string::npos);
  EXPECT_NE(case_error(base + " --head_dim 64 --rotary_dim 128").find("at most --head_dim (64)"), std::string::npos);
  EXPECT_NE(case_error(base + " --head_dim 64 --rope_theta 0").find("--rope_theta must be a positive float"), std::string::npos);
  EXPECT_NE(case_error(base + " --head_dim 64 --rope_scale 0").find("--rope_scale must be a positive float"), std::string::npos);
  EXPECT_NE(case_error("-R apply_llama31_rope --batch_size 2 --seq_len 4 --num_qo_heads 4 --num_kv_heads 2 --head_dim 64 "
                       "--low_freq_factor 4 --high_freq_factor 4")
                .find("--high_freq_factor must be above --low_freq_factor"),
            std::string::npos);
  EXPECT_NE(case_error("-R apply_rope --batch_size 1048576 --seq_len 1048576 --num_qo_heads 4 --num_kv_heads 2 --head_dim 64")
                .find("over 2^40"),
            std::string::npos);
}

TEST_F(RopeRoutines, MeaninglessFlagsAreWarnedAbout) {
  EXPECT_EQ(problem(make(std::string("-R apply_rope") + kShape + " --no_rope_dim 64 --old_context_len 4096 --enable_pdl"))
                .ignored_flags,
            (std::vector<std::string>{"old_context_len", "no_rope_dim", "enable_pdl"}));
  EXPECT_TRUE(problem(make(std::string("-R apply_llama31_rope") + kShape + " --old_context_len 4096")).ignored_flags.empty());
}

// Pair frequencies: 4 dims, theta 1e4: f_0 = 1, f_1 = 1e4^(-1/2) = 0.01. Position 1.
TEST(RopeReference, NeoxRotatesPairsHalfAHeadApart) {
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<int64_t> positions = {1};
  const auto out = ref::rotate(x, {1, 1, 4, 4, false}, positions, ref::computed_rotation({}, 4));
  // (0, 2) by 1 radian, (1, 3) by 0.01: 1 cos 1 - 3 sin 1, 2 cos .01 - 4 sin .01, 3 cos 1 + sin 1, 4 cos .01 + 2 sin .01.
  const std::vector<float> expected = {-1.98411065f, 1.95990067f, 2.46237790f, 4.01979967f};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << i;
}

TEST(RopeReference, InterleavedRotatesAdjacentPairs) {
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<int64_t> positions = {1};
  const auto out = ref::rotate(x, {1, 1, 4, 4, true}, positions, ref::computed_rotation({}, 4));
  const std::vector<float> expected = {-1.14263966f, 1.92207560f, 2.95985067f, 4.02979950f};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << i;
}

TEST(RopeReference, PartialRotaryDimCopiesTheTailAndPositionZeroIsIdentity) {
  // Two tokens of 2 heads, head_dim 6, rotary_dim 4: dims 4 and 5 unchanged; token 0 (position 0) unchanged.
  std::vector<float> x(2 * 2 * 6);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 1.0f;
  const std::vector<int64_t> positions = {0, 1};
  const auto out = ref::rotate(x, {2, 2, 6, 4, false}, positions, ref::computed_rotation({}, 4));
  for (std::size_t i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(out[i], x[i]) << i;
  for (std::size_t head = 2; head < 4; ++head) {
    EXPECT_FLOAT_EQ(out[head * 6 + 4], x[head * 6 + 4]);
    EXPECT_FLOAT_EQ(out[head * 6 + 5], x[head * 6 + 5]);
    EXPECT_NE(out[head * 6], x[head * 6]);
  }
}

TEST(RopeReference, Llama31FrequenciesBlendByWavelength) {
  const ref::Frequencies llama{5e5, 8.0, true, 1.0, 4.0, 8192.0};
  // j = 0: wavelength 2 pi, under 8192 / 4: unchanged.
  EXPECT_DOUBLE_EQ(ref::pair_frequency(llama, 0, 128), 1.0);
  // j = 63: base 2.4551e-6, wavelength 2.56e6, over 8192 / 1: divided by the scale.
  EXPECT_NEAR(ref::pair_frequency(llama, 63, 128), 2.455140791131609e-06 / 8, 1e-18);
  // j = 29: base 0.0026161, wavelength 2401.7, between: smooth = (8192 / 2401.7 - 1) / 3.
  EXPECT_NEAR(ref::pair_frequency(llama, 29, 128), 0.002166570763503359, 1e-15);
  // The kernel's form (clamp(base * a + b, 0, 1)) is the same rule.
  const ref::SmoothCoefficients c = ref::smooth_coefficients(llama);
  for (int pair = 0; pair < 64; ++pair) {
    const double base = std::pow(5e5, -2.0 * pair / 128);
    const double smooth = std::clamp(base * c.a + c.b, 0.0, 1.0);
    EXPECT_NEAR((1 - smooth) * base / 8 + smooth * base, ref::pair_frequency(llama, pair, 128), 1e-12 * base) << pair;
  }
  // Plain frequencies divide by the scale.
  EXPECT_DOUBLE_EQ(ref::pair_frequency({1e4, 2.0}, 1, 4), 0.005);
}

TEST(RopeReference, CacheHoldsCosThenSinPerPosition) {
  const auto cache = ref::cos_sin_cache({}, 3, 4);
  ASSERT_EQ(cache.size(), 12u);
  // Row 2: cos(2), cos(0.02), sin(2), sin(0.02).
  EXPECT_FLOAT_EQ(cache[8], static_cast<float>(std::cos(2.0)));
  EXPECT_FLOAT_EQ(cache[9], static_cast<float>(std::cos(0.02)));
  EXPECT_FLOAT_EQ(cache[10], static_cast<float>(std::sin(2.0)));
  EXPECT_FLOAT_EQ(cache[11], static_cast<float>(std::sin(0.02)));
  // Rotating from the cache is rotating from the angles (to the cache's fp32 rounding).
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<int64_t> positions = {2};
  const auto from_cache = ref::rotate(x, {1, 1, 4, 4, false}, positions, ref::cached_rotation(cache, 4));
  const auto computed = ref::rotate(x, {1, 1, 4, 4, false}, positions, ref::computed_rotation({}, 4));
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(from_cache[i], computed[i], 1e-6) << i;
}

}  // namespace
}  // namespace kbench
