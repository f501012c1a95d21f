// The FP8 RoPE routines (rope_quantize_fp8, mla_rope_quantize_fp8,
// rope_quantize_fp8_append_paged_kv_cache) without a GPU: the reference's flags, defaults and byte
// formulas, how each derives its rope and unrotated dims, validation messages, the tensors a case
// describes, the paged cache's index formulas and the host reference of the append.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "routines/builtin_routines.hpp"
#include "routines/rope/rope_quantize_case.hpp"
#include "routines/rope/rope_reference.hpp"

#include "case_from_line.hpp"

namespace kbench {
namespace {

namespace ref = rope_reference;

class RopeQuantizeRoutines : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();

  std::unique_ptr<Case> make(const std::string& line) { return testing::case_from_line(registry, line); }
  const RopeQuantizeCase& as_quantize(const std::unique_ptr<Case>& c) { return dynamic_cast<const RopeQuantizeCase&>(*c); }
  const RopeProblem& problem(const std::unique_ptr<Case>& c) { return as_quantize(c).problem(); }
  std::string case_error(const std::string& line) { return testing::case_error_of(registry, line); }
};

constexpr const char* kShape = " --batch_size 16 --seq_len 1024 --num_qo_heads 32 --num_kv_heads 8 --head_dim 128";

TEST_F(RopeQuantizeRoutines, BytesAreTheReferencesFormulas) {
  const double t = 16.0 * 1024.0;
  const double b = 2.0, bq = 1.0;
  // rope_quantize_fp8: T Hq r (b + bq) + T Hk r (b + bq) + 4 S r + 4 T (no nope part by default).
  EXPECT_DOUBLE_EQ(make(std::string("-R rope_quantize_fp8") + kShape + " --input_dtype bfloat16")->bytes(),
                   t * 32 * 128 * (b + bq) + t * 8 * 128 * (b + bq) + 4.0 * 1024 * 128 + 4 * t);
  // With a nope part: + T (Hq + Hk) nd (b + bq); r from --rotary_dim.
  EXPECT_DOUBLE_EQ(make(std::string("-R rope_quantize_fp8") + kShape + " --rotary_dim 64 --no_rope_dim 32")->bytes(),
                   t * 40 * 64 * (b + bq) + t * 40 * 32 * (b + bq) + 4.0 * 1024 * 64 + 4 * t);
  // MLA (sample line 284): rd = 192 - 64 = 128, one latent k head.
  const double mla_t = 16.0 * 1024;
  EXPECT_DOUBLE_EQ(make("-R mla_rope_quantize_fp8 --batch_size 16 --seq_len 1024 --num_qo_heads 128 --num_kv_heads 128 "
                        "--head_dim 192 --no_rope_dim 64 --input_dtype bfloat16")
                       ->bytes(),
                   mla_t * 128 * 128 * (b + bq) + mla_t * 128 * (b + bq) + mla_t * 128 * 64 * (b + bq) +
                       mla_t * 64 * (b + bq) + 4.0 * 1024 * 128 + 4 * mla_t);
  // Paged append (sample line 291): T Hq r (b + bq) + T Hk r b + T Hk D b + 4 S r + 4 T + 2 T Hk D bq.
  const double pt = 16.0 * 64;
  EXPECT_DOUBLE_EQ(make("-R rope_quantize_fp8_append_paged_kv_cache --batch_size 16 --seq_len 64 --num_qo_heads 32 "
                        "--num_kv_heads 8 --head_dim 128 --page_size 16 --input_dtype bfloat16")
                       ->bytes(),
                   pt * 32 * 128 * (b + bq) + pt * 8 * 128 * b + pt * 8 * 128 * b + 4.0 * 64 * 128 + 4 * pt +
                       2 * pt * 8 * 128 * bq);
  // Partial rotary dim: nd = D - r adds T Hq nd b + T Hk nd b + T Hq nd bq.
  EXPECT_DOUBLE_EQ(make("-R rope_quantize_fp8_append_paged_kv_cache --batch_size 2 --seq_len 100 --num_qo_heads 4 "
                        "--num_kv_heads 2 --head_dim 128 --rotary_dim 64")
                       ->bytes(),
                   200.0 * 4 * 64 * (b + bq) + 200.0 * 2 * 64 * b + 200.0 * 2 * 128 * b +
                       (200.0 * 4 * 64 * b + 200.0 * 2 * 64 * b + 200.0 * 4 * 64 * bq) + 4.0 * 100 * 64 + 4 * 200.0 +
                       2 * 200.0 * 2 * 128 * bq);
  EXPECT_DOUBLE_EQ(make(std::string("-R rope_quantize_fp8") + kShape)->flops(), 0.0);
}

TEST_F(RopeQuantizeRoutines, DimsAndDefaultsAreTheReferences) {
  const auto plain = make(std::string("-R rope_quantize_fp8") + kShape);
  const RopeProblem& p = problem(plain);
  EXPECT_EQ(p.rotary_dim, 128);
  EXPECT_EQ(p.no_rope_dim, 0);
  EXPECT_EQ(p.k_heads, 8);
  EXPECT_EQ(p.dtype, DType::float16);
  EXPECT_EQ(p.quant_dtype, DType::fp8_e4m3);
  EXPECT_DOUBLE_EQ(p.quant_scale_q, 1.0);
  EXPECT_DOUBLE_EQ(p.quant_scale_kv, 1.0);
  EXPECT_FALSE(p.interleave);
  EXPECT_FALSE(p.enable_pdl);
  EXPECT_FALSE(as_quantize(plain).paged());
  // The MLA form: rope dim = head_dim - no_rope_dim, one latent k head, --rotary_dim ignored.
  const auto mla = make("-R mla_rope_quantize_fp8 --batch_size 2 --seq_len 8 --num_qo_heads 16 --num_kv_heads 16 "
                        "--head_dim 192 --no_rope_dim 64 --rotary_dim 32 --quant_dtype fp8_e5m2 --enable_pdl");
  EXPECT_EQ(problem(mla).rotary_dim, 128);
  EXPECT_EQ(problem(mla).no_rope_dim, 64);
  EXPECT_EQ(problem(mla).k_heads, 1);
  EXPECT_EQ(problem(mla).quant_dtype, DType::fp8_e5m2);
  EXPECT_TRUE(problem(mla).enable_pdl);  // the reference forwards --enable_pdl to the FP8 routines
  EXPECT_EQ(problem(mla).ignored_flags, (std::vector<std::string>{"rotary_dim"}));
  // The paged append: nd = head_dim - rotary_dim, --no_rope_dim ignored; page 16 and NHD by default.
  const auto paged = make("-R rope_quantize_fp8_append_paged_kv_cache --batch_size 3 --seq_len 50 --num_qo_heads 4 "
                          "--num_kv_heads 2 --head_dim 128 --rotary_dim 96 --interleave --no_rope_dim 16");
  EXPECT_TRUE(as_quantize(paged).paged());
  EXPECT_EQ(problem(paged).rotary_dim, 96);
  EXPECT_EQ(problem(paged).no_rope_dim, 32);
  EXPECT_EQ(problem(paged).page_size, 16);
  EXPECT_FALSE(problem(paged).hnd);
  EXPECT_EQ(problem(paged).ignored_flags, (std::vector<std::string>{"no_rope_dim"}));
  // ceil(50 / 16) = 4 pages per request.
  EXPECT_EQ(problem(paged).pages_per_request(), 4);
  EXPECT_EQ(problem(paged).pages(), 12);
  const auto hnd = make("-R rope_quantize_fp8_append_paged_kv_cache --batch_size 3 --seq_len 50 --num_qo_heads 4 "
                        "--num_kv_heads 2 --head_dim 128 --page_size 1 --kv_layout HND");
  EXPECT_TRUE(problem(hnd).hnd);
  EXPECT_EQ(problem(hnd).pages(), 150);
  EXPECT_EQ(problem(hnd).no_rope_dim, 0);
}

TEST_F(RopeQuantizeRoutines, MeaninglessFlagsAreWarnedAbout) {
  EXPECT_EQ(problem(make(std::string("-R rope_quantize_fp8") + kShape + " --page_size 4 --old_context_len 4096")).ignored_flags,
            (std::vector<std::string>{"old_context_len", "page_size"}));
  EXPECT_TRUE(problem(make(std::string("-R rope_quantize_fp8_append_paged_kv_cache") + kShape + " --page_size 4 --kv_layout HND"))
                  .ignored_flags.empty());
}

TEST_F(RopeQuantizeRoutines, ValidationNamesTheDims) {
  const std::string base = "-R rope_quantize_fp8 --batch_size 2 --seq_len 4 --num_qo_heads 4 --num_kv_heads 2 --head_dim 128";
  EXPECT_NE(case_error(base + " --rotary_dim 48").find("(--rotary_dim) must be a multiple of 32 (NeoX), got 48"), std::string::npos);
  EXPECT_EQ(problem(make(base + " --rotary_dim 48 --interleave")).rotary_dim, 48);  // interleaved: whole 16-element units
  EXPECT_NE(case_error(base + " --no_rope_dim 8").find("(--no_rope_dim) must be a multiple of 16, got 8"), std::string::npos);
  const std::string mla = "-R mla_rope_quantize_fp8 --batch_size 2 --seq_len 4 --num_qo_heads 4 --num_kv_heads 2";
  EXPECT_NE(case_error(mla + " --head_dim 64 --no_rope_dim 64").find("--no_rope_dim must be below --head_dim (64)"),
            std::string::npos);
  EXPECT_NE(case_error(mla + " --head_dim 80 --no_rope_dim 32").find("(--head_dim - --no_rope_dim) must be a multiple of 32"),
            std::string::npos);
  const std::string paged =
      "-R rope_quantize_fp8_append_paged_kv_cache --batch_size 2 --seq_len 4 --num_qo_heads 4 --num_kv_heads 2";
  EXPECT_NE(case_error(paged + " --head_dim 64 --rotary_dim 128").find("--rotary_dim must be at most --head_dim (64)"),
            std::string::npos);
  EXPECT_NE(case_error(paged + " --head_dim 72 --rotary_dim 64").find("(--head_dim - --rotary_dim) must be a multiple of 16"),
            std::string::npos);
  EXPECT_NE(case_error(paged + " --head_dim 64 --page_size 0").find("--page_size must be positive"), std::string::npos);
}

TEST_F(RopeQuantizeRoutines, TensorsAreDescribed) {
  const auto mla = make("-R mla_rope_quantize_fp8 --batch_size 2 --seq_len 5 --num_qo_heads 4 --num_kv_heads 4 "
                        "--head_dim 192 --no_rope_dim 64")
                       ->tensors();
  ASSERT_EQ(mla.size(), 10u);
  EXPECT_EQ(mla[0].name, "q_rope");
  EXPECT_EQ(mla[0].shape, (std::vector<int64_t>{10, 4, 128}));
  EXPECT_EQ(mla[1].name, "k_rope");
  EXPECT_EQ(mla[1].shape, (std::vector<int64_t>{10, 128}));  // the latent k is 2-D
  EXPECT_EQ(mla[3].name, "k_nope");
  EXPECT_EQ(mla[3].shape, (std::vector<int64_t>{10, 64}));
  EXPECT_EQ(mla[4].name, "cos_sin_cache");
  EXPECT_EQ(mla[4].shape, (std::vector<int64_t>{5, 128}));
  EXPECT_EQ(mla[4].dtype, DType::float32);
  EXPECT_EQ(mla[6].name, "q_rope_out");
  EXPECT_EQ(mla[6].dtype, DType::fp8_e4m3);
  const auto paged = make("-R rope_quantize_fp8_append_paged_kv_cache --batch_size 2 --seq_len 5 --num_qo_heads 4 "
                          "--num_kv_heads 2 --head_dim 64 --page_size 4 --kv_layout HND --quant_dtype fp8_e5m2")
                         ->tensors();
  ASSERT_EQ(paged.size(), 12u);
  EXPECT_EQ(paged[2].name, "v");
  EXPECT_EQ(paged[2].shape, (std::vector<int64_t>{10, 2, 64}));
  EXPECT_EQ(paged[5].name, "k_cache");
  EXPECT_EQ(paged[5].shape, (std::vector<int64_t>{4, 2, 4, 64}));  // (pages, heads, page, D): HND, 2 x ceil(5/4) pages
  EXPECT_EQ(paged[5].stride, (std::vector<int64_t>{512, 256, 64, 1}));
  EXPECT_EQ(paged[5].dtype, DType::fp8_e5m2);
  EXPECT_EQ(paged[11].name, "q_rope_out");
  const auto nhd = make("-R rope_quantize_fp8_append_paged_kv_cache --batch_size 2 --seq_len 5 --num_qo_heads 4 "
                        "--num_kv_heads 2 --head_dim 64 --page_size 4")
                       ->tensors();
  EXPECT_EQ(nhd[5].shape, (std::vector<int64_t>{4, 4, 2, 64}));
}

TEST(RopePagedCache, IndexFormulas) {
  // 3 pages of 4 entries, 2 heads of 8 dims.
  const ref::PagedCache nhd{3, 4, 2, 8, false};
  const ref::PagedCache hnd{3, 4, 2, 8, true};
  EXPECT_EQ(nhd.elements(), 3 * 4 * 2 * 8);
  // NHD: ((page * page_size + entry) * heads + head) * head_dim + element.
  EXPECT_EQ(ref::cache_offset(nhd, 2, 3, 1, 5), ((2 * 4 + 3) * 2 + 1) * 8 + 5);
  EXPECT_EQ(ref::cache_offset(nhd, 0, 1, 0, 0), 16);
  // HND: ((page * heads + head) * page_size + entry) * head_dim + element.
  EXPECT_EQ(ref::cache_offset(hnd, 2, 3, 1, 5), ((2 * 2 + 1) * 4 + 3) * 8 + 5);
  EXPECT_EQ(ref::cache_offset(hnd, 0, 1, 0, 0), 8);
  // Every element of the cache is reached exactly once, in both layouts.
  for (const ref::PagedCache& c : {nhd, hnd}) {
    std::vector<int> hits(static_cast<std::size_t>(c.elements()), 0);
    for (int64_t page = 0; page < c.pages; ++page)
      for (int entry = 0; entry < c.page_size; ++entry)
        for (int head = 0; head < c.heads; ++head)
          for (int d = 0; d < c.head_dim; ++d) ++hits[static_cast<std::size_t>(ref::cache_offset(c, page, entry, head, d))];
    for (int h : hits) EXPECT_EQ(h, 1);
  }
  // Slot = kv_indptr[b] * page_size + position, through kv_indices (shuffled here).
  const std::vector<int32_t> kv_indices = {5, 2, 7, 0};
  EXPECT_EQ(ref::append_entry(kv_indices, 1, 16, 0).page, 2);
  EXPECT_EQ(ref::append_entry(kv_indices, 1, 16, 0).entry, 0);
  EXPECT_EQ(ref::append_entry(kv_indices, 1, 16, 17).page, 7);
  EXPECT_EQ(ref::append_entry(kv_indices, 1, 16, 17).entry, 1);
  EXPECT_EQ(ref::append_entry(kv_indices, 0, 1, 3).page, 0);
  EXPECT_EQ(ref::append_entry(kv_indices, 0, 1, 3).entry, 0);
}

TEST(RopePagedCache, AppendWritesOnlyTheTokensSlots) {
  // Two requests of 3 and 2 tokens plus a padding token (batch index -1); page size 2, 1 head,
  // head_dim 4 = rope 2 + nope 2; request 0 owns pages {3, 0}, request 1 page {1}; page 2 is nobody's.
  const ref::PagedCache c{4, 2, 1, 4, false};
  const std::vector<int32_t> kv_indices = {3, 0, 1};
  const std::vector<int32_t> kv_indptr = {0, 2, 3};
  const std::vector<int32_t> batch = {0, 0, 0, 1, 1, -1};
  const std::vector<int32_t> positions = {0, 1, 2, 0, 1, 0};
  std::vector<float> k_rope, k_nope, v;
  for (int t = 0; t < 6; ++t) {
    k_rope.insert(k_rope.end(), {100.0f * t + 1, 100.0f * t + 2});
    k_nope.insert(k_nope.end(), {100.0f * t + 3, 100.0f * t + 4});
    v.insert(v.end(), {-100.0f * t - 1, -100.0f * t - 2, -100.0f * t - 3, -100.0f * t - 4});
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ref::PagedCaches out = ref::append_to_cache(c, {kv_indices, kv_indptr, batch, positions}, k_rope, k_nope, v, 2, nan);
  auto k_at = [&](int page, int entry, int d) { return out.k[static_cast<std::size_t>(ref::cache_offset(c, page, entry, 0, d))]; };
  auto v_at = [&](int page, int entry, int d) { return out.v[static_cast<std::size_t>(ref::cache_offset(c, page, entry, 0, d))]; };
  // Token 0 -> page 3 entry 0, token 1 -> page 3 entry 1, token 2 -> page 0 entry 0: rope dims first.
  EXPECT_EQ(k_at(3, 0, 0), 1.0f);
  EXPECT_EQ(k_at(3, 0, 2), 3.0f);
  EXPECT_EQ(k_at(3, 1, 3), 104.0f);
  EXPECT_EQ(k_at(0, 0, 1), 202.0f);
  EXPECT_EQ(v_at(0, 0, 3), -204.0f);
  // Request 1: page 1 entries 0 and 1.
  EXPECT_EQ(k_at(1, 0, 0), 301.0f);
  EXPECT_EQ(v_at(1, 1, 2), -403.0f);
  // Untouched: page 0 entry 1 (request 0 has 3 tokens), all of page 2; the padding token nowhere.
  for (int d = 0; d < 4; ++d) {
    EXPECT_TRUE(std::isnan(k_at(0, 1, d)));
    EXPECT_TRUE(std::isnan(v_at(0, 1, d)));
    for (int entry = 0; entry < 2; ++entry) EXPECT_TRUE(std::isnan(k_at(2, entry, d)));
  }
  int written = 0;
  for (float x : out.k) written += std::isnan(x) ? 0 : 1;
  EXPECT_EQ(written, 5 * 4);
}

TEST(RopeReference, ScaledMultipliesEveryElement) {
  EXPECT_EQ(ref::scaled({1.0f, -2.0f, 0.5f}, 0.5), (std::vector<float>{0.5f, -1.0f, 0.25f}));
}

}  // namespace
}  // namespace kbench
