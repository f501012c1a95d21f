// BatchMLAPagedAttentionWrapper on the host: its flags as the reference's parser has them, the
// validation messages, the formulas of mla.md, the sm_scale rule and the inputs' construction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/cli.hpp"
#include "core/csv.hpp"
#include "core/device_info.hpp"
#include "core/shell_words.hpp"
#include "core/usage_error.hpp"
#include "routines/attention/mla_case.hpp"
#include "routines/builtin_routines.hpp"

#include "case_from_line.hpp"

namespace kbench {
namespace {

constexpr const char* kRoutine = "BatchMLAPagedAttentionWrapper";

class MlaRoutineTest : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();
  const Routine& mla = *registry.find(kRoutine);
  static constexpr const char* kBase =
      "--routine BatchMLAPagedAttentionWrapper --page_size 64 --batch_size 2 --s_kv 100 --num_qo_heads 16 "
      "--num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64";
  std::unique_ptr<MlaCase> make(const std::string& extra) {
    auto c = testing::case_from_line(registry, std::string(kBase) + " " + extra);
    return std::unique_ptr<MlaCase>(&dynamic_cast<MlaCase&>(*c.release()));
  }
  std::string error(const std::string& extra) { return testing::case_error_of(registry, std::string(kBase) + " " + extra); }
};

TEST_F(MlaRoutineTest, TheReferenceSampleLinesParse) {
  // ../shared/peer/flashinfer_sample_testlist.txt lines 19 and 22, verbatim.
  for (const std::string line : {
           "--routine BatchMLAPagedAttentionWrapper --backends trtllm-gen-native fa2 fa3 --page_size 32 --batch_size 16 "
           "--s_qo 1 --s_kv 1024 --num_qo_heads 128 --num_kv_heads 128 --head_dim_ckv 512 --head_dim_kpe 64 "
           "--random_actual_seq_len -vv --refcheck --q_dtype bfloat16 --kv_dtype bfloat16 --generate_repro_command "
           "--case_tag \"DeepSeek-R1\"",
           "--routine BatchMLAPagedAttentionWrapper --backends prims-ts trtllm-native --page_size 32 --batch_size 4 "
           "--s_qo 4 --s_kv 4096 --num_qo_heads 32 --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 -vv "
           "--refcheck --q_dtype bfloat16 --kv_dtype bfloat16 --case_tag \"PrimTS-MLA-decode-SQ4\""}) {
    const auto c = testing::case_from_line(registry, line);
    EXPECT_GT(c->flops(), 0) << line;
  }
}

TEST_F(MlaRoutineTest, FlagsFollowTheReferenceParser) {
  std::map<std::string, FlagSpec> flags;
  for (const FlagSpec& f : mla.flags()) flags.emplace(f.name, f);
  for (const char* required : {"head_dim_ckv", "head_dim_kpe", "num_kv_heads", "batch_size", "s_kv"}) {
    EXPECT_TRUE(flags.at(required).required) << required;
  }
  EXPECT_FALSE(flags.at("head_dim_qk").required);
  EXPECT_FALSE(flags.at("head_dim_vo").required);
  EXPECT_EQ(flags.at("page_size").default_value, "0");
  EXPECT_EQ(mla.csv_column(flags.at("mla_is_var_seq")), "is_var_seq");
  EXPECT_EQ(mla.csv_column(flags.at("mla_cute_dsl_impl")), "cute_dsl_impl");
  EXPECT_EQ(mla.csv_column(flags.at("s_qo")), "s_qo");
  for (const char* flag : {"page_size", "s_qo", "random_actual_seq_len", "mla_is_var_seq", "mla_cute_dsl_impl",
                           "q_dtype", "kv_dtype", "causal", "out_dtype"}) {
    EXPECT_TRUE(flags.count(flag)) << flag;
  }
  EXPECT_FALSE(flags.count("kv_layout"));
  EXPECT_EQ(mla.default_backends(), (std::vector<std::string>{"fa2"}));
  EXPECT_EQ(mla.test_name(), "testBatchMLAPagedAttentionWrapper");
  // The reference's MLA-only flags fill its own columns, not columns of their flag names.
  const auto columns = csv_columns(registry);
  EXPECT_EQ(std::count(columns.begin(), columns.end(), "is_var_seq"), 1);
  EXPECT_EQ(std::count(columns.begin(), columns.end(), "mla_is_var_seq"), 0);
  EXPECT_EQ(std::count(columns.begin(), columns.end(), "mla_cute_dsl_impl"), 0);
  (void)make("--mla_is_var_seq auto --mla_cute_dsl_impl modular");
  EXPECT_THROW((void)make("--mla_is_var_seq maybe"), UsageError);
}

TEST_F(MlaRoutineTest, FlashinferBackendsAreNamedApartFromKbenchs) {
  ASSERT_NE(mla.find_backend("flashinfer_fa3"), nullptr);
  ASSERT_NE(mla.find_backend("flashinfer_fa2"), nullptr);
  EXPECT_EQ(mla.find_backend("flashinfer"), mla.find_backend("flashinfer_fa3"));
  // fa2 is kbench's own mma.sync MLA kernel, fa3 its Hopper (wgmma) one.
  ASSERT_NE(mla.find_backend("fa2"), nullptr);
  ASSERT_NE(mla.find_backend("fa3"), nullptr);
  EXPECT_NE(mla.find_backend("fa3"), mla.find_backend("flashinfer_fa3"));
}

TEST_F(MlaRoutineTest, KbenchFa2SaysWhatItDoesNotTake) {
  const Backend* fa2 = mla.find_backend("fa2");
  ASSERT_NE(fa2, nullptr);
  EXPECT_TRUE(fa2->can_implement(*make("--s_qo 4")));
  // fp8 e4m3 KV with bfloat16 or fp8 q; fp8 q with a bfloat16 cache is not taken.
  EXPECT_TRUE(fa2->can_implement(*make("--kv_dtype fp8_e4m3")));
  EXPECT_TRUE(fa2->can_implement(*make("--q_dtype fp8_e4m3 --kv_dtype fp8_e4m3")));
  const Support fp8 = fa2->can_implement(*make("--q_dtype fp8_e4m3"));
  EXPECT_FALSE(fp8);
  EXPECT_NE(fp8.reason.find("fp8_e4m3 / fp8_e4m3 only (got q fp8_e4m3, kv bfloat16)"), std::string::npos) << fp8.reason;
  const Support dims = fa2->can_implement(*make("--head_dim_ckv 256 --head_dim_kpe 32"));
  EXPECT_FALSE(dims);
  EXPECT_NE(dims.reason.find("head dims 512 / 64 only"), std::string::npos) << dims.reason;
}

TEST_F(MlaRoutineTest, KbenchFa3SaysWhatItDoesNotTake) {
  const Backend* fa3 = mla.find_backend("fa3");
  ASSERT_NE(fa3, nullptr);
  EXPECT_TRUE(fa3->can_implement(*make("--s_qo 4")));
  EXPECT_TRUE(fa3->can_implement(*make("--kv_dtype fp8_e4m3")));  // fp8 KV, bf16 or fp8 q
  EXPECT_TRUE(fa3->can_implement(*make("--q_dtype fp8_e4m3 --kv_dtype fp8_e4m3")));
  const Support dims = fa3->can_implement(*make("--head_dim_ckv 256 --head_dim_kpe 32"));
  EXPECT_FALSE(dims);
  EXPECT_NE(dims.reason.find("head dims 512 / 64 only"), std::string::npos) << dims.reason;
  DeviceInfo ampere;
  ampere.cc_major = 8;
  const Support device = fa3->can_run_on(ampere);
  EXPECT_FALSE(device);
  EXPECT_NE(device.reason.find("sm_90a only"), std::string::npos) << device.reason;
}

TEST_F(MlaRoutineTest, RejectsWhatMlaCannotBe) {
  EXPECT_NE(error("--page_size 0").find("--page_size is required"), std::string::npos);
  EXPECT_NE(error("--q_dtype float16").find("--q_dtype float16 is not supported by MLA"), std::string::npos);
  EXPECT_NE(error("--kv_dtype fp8_e5m2").find("--kv_dtype fp8_e5m2 is not supported by MLA"), std::string::npos);
  EXPECT_NE(error("--s_qo 101").find("--s_qo 101 is larger than --s_kv 100"), std::string::npos);
  EXPECT_NE(error("--s_qo 0").find("--s_qo must be in [1, 2^30]"), std::string::npos);
  EXPECT_NE(error("--head_dim_ckv 4096").find("--head_dim_ckv 4096 is over 2048"), std::string::npos);
  EXPECT_NE(error("--head_dim_kpe 1024").find("--head_dim_kpe 1024 is over 512"), std::string::npos);
  EXPECT_NE(error("--head_dim_kpe 0").find("--head_dim_kpe must be in [1, 2^30]"), std::string::npos);
  EXPECT_NE(error("--num_qo_heads 70000").find("--num_qo_heads 70000 is over MLA's 65535"), std::string::npos);
  EXPECT_NE(error("--num_kv_heads 0").find("--num_kv_heads must be in [1, 2^30]"), std::string::npos);
  EXPECT_NE(error("--batch_size 65536 --s_kv 65536").find("over 2^31 - 1 tokens"), std::string::npos);
  // --head_dim_ckv and --head_dim_kpe are required, --head_dim_qk is not.
  EXPECT_THROW((void)parse_case(split_shell_words("--routine BatchMLAPagedAttentionWrapper --page_size 64 --batch_size 2 "
                                                  "--s_kv 100 --num_qo_heads 16 --num_kv_heads 1 --head_dim_kpe 64"),
                                registry),
               UsageError);
}

TEST_F(MlaRoutineTest, FormulasAreMlaMds) {
  // Fixed lengths 100, s_qo 2: s_q (2k - s_q + 1) / 2 = 199 attended pairs per request.
  const auto c = make("--s_qo 2");
  EXPECT_DOUBLE_EQ(c->flops(), 2.0 * 16 * (2 * 512 + 64) * 2 * 199);
  EXPECT_DOUBLE_EQ(c->bytes(), 4.0 * 16 * 576 * 2 + 200.0 * 576 * 2 + 4.0 * 16 * 512 * 2);
  // FP8 KV: one byte per cache element; the output still counted as 2 bytes.
  const auto fp8 = make("--kv_dtype fp8_e4m3 --q_dtype fp8_e4m3");
  EXPECT_DOUBLE_EQ(fp8->bytes(), 2.0 * 16 * 576 * 1 + 200.0 * 576 * 1 + 2.0 * 16 * 512 * 2);
  EXPECT_EQ(fp8->problem().out_dtype, DType::bfloat16);
  EXPECT_DOUBLE_EQ(fp8->flops(), 2.0 * 16 * (2 * 512 + 64) * 2 * 100);
}

TEST_F(MlaRoutineTest, SmScaleIsDeepSeeksWhateverTheDims) {
  EXPECT_FLOAT_EQ(MlaCase::sm_scale(), static_cast<float>(1.0 / std::sqrt(192.0)));
  EXPECT_NEAR(MlaCase::sm_scale(), 0.0721688, 1e-7);
  const auto other = make("--head_dim_ckv 256 --head_dim_kpe 32");
  EXPECT_EQ(other->params(MlaCase::kNoCopy).sm_scale, MlaCase::sm_scale());
}

TEST_F(MlaRoutineTest, LengthsAreRaisedToTheQueryTokensAndPagedAsTheReference) {
  const auto c = make("--batch_size 64 --s_kv 8 --s_qo 4 --page_size 3 --random_actual_seq_len");
  const MlaProblem& p = c->problem();
  EXPECT_TRUE(std::all_of(p.pages.seq_lens.begin(), p.pages.seq_lens.end(), [](int32_t k) { return k >= 4 && k <= 8; }));
  EXPECT_GT(std::count(p.pages.seq_lens.begin(), p.pages.seq_lens.end(), 4), 8);  // [1, 4] all became 4
  EXPECT_GT(std::set<int32_t>(p.pages.seq_lens.begin(), p.pages.seq_lens.end()).size(), 2u);
  EXPECT_EQ(p.pages.pages_per_request, 3);  // ceil(8 / 3), sized by the maximum
  EXPECT_EQ(p.pages.total_pages, 64 * 3);
  ASSERT_EQ(p.qo_indptr.size(), 65u);
  for (int b = 0; b < 64; ++b) {
    EXPECT_EQ(p.qo_indptr[b], 4 * b);
    EXPECT_EQ(p.pages.indptr[b + 1] - p.pages.indptr[b], (p.pages.seq_lens[b] + 2) / 3);
  }
  // Fixed lengths are s_kv; the same seed gives the same case.
  const auto fixed = make("--s_qo 3");
  EXPECT_EQ(fixed->problem().pages.seq_lens, (std::vector<int32_t>{100, 100}));
  EXPECT_EQ(make("--batch_size 64 --s_kv 8 --s_qo 4 --page_size 3 --random_actual_seq_len")->problem().pages.block_table,
            p.pages.block_table);
}

TEST_F(MlaRoutineTest, DescribesItsTensorsAsTheReference) {
  const auto c = make("--s_qo 2 --kv_dtype fp8_e4m3");
  std::vector<std::string> names;
  for (const TensorInfo& t : c->tensors()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"q_nope", "q_pe", "ckv_cache", "kpe_cache", "block_tables", "qo_indptr",
                                             "kv_indptr", "kv_indices", "kv_lens", "out"}));
  const auto tensors = c->tensors();
  EXPECT_EQ(tensors[0].shape, (std::vector<int64_t>{4, 16, 512}));
  EXPECT_EQ(tensors[1].shape, (std::vector<int64_t>{4, 16, 64}));
  EXPECT_EQ(tensors[2].shape, (std::vector<int64_t>{4, 64, 512}));  // 2 requests x ceil(100 / 64) pages
  EXPECT_EQ(tensors[2].dtype, DType::fp8_e4m3);
  EXPECT_EQ(tensors[8].shape, (std::vector<int64_t>{2, 1, 1, 1}));
  EXPECT_EQ(tensors[9].dtype, DType::bfloat16);
  const auto columns = c->result_columns();
  EXPECT_NE(std::find(columns.begin(), columns.end(), std::pair<std::string, std::string>{"causal", "True"}),
            columns.end());
  EXPECT_NE(std::find(columns.begin(), columns.end(), std::pair<std::string, std::string>{"avg_actual_seq_len", "100"}),
            columns.end());
  // Per-tensor fp8 scales reach the kernels' parameters.
  const kernels::MlaParams k = c->params(MlaCase::kNoCopy);
  EXPECT_FLOAT_EQ(k.ckv_scale, 0.1f);
  EXPECT_FLOAT_EQ(k.kpe_scale, 0.1f);
  EXPECT_FLOAT_EQ(k.q_scale, 1.0f);
}

// auto: fa3 first (Hopper, what it takes), then fa2, whatever the lengths and dtypes (fa3 measured
// faster on every case, session 27).
TEST_F(MlaRoutineTest, AutoTriesFa3ThenFa2) {
  const std::vector<std::string> fa3_then_fa2{"fa3", "fa2"};
  EXPECT_EQ(mla.auto_candidates(*testing::case_from_line(registry, kBase)), fa3_then_fa2);
  const std::string ragged = std::string(kBase) + " --batch_size 8 --s_kv 4096 --random_actual_seq_len";
  EXPECT_EQ(mla.auto_candidates(*testing::case_from_line(registry, ragged)), fa3_then_fa2);
  EXPECT_EQ(mla.auto_candidates(*testing::case_from_line(registry, std::string(kBase) + " --kv_dtype fp8_e4m3")),
            fa3_then_fa2);
  EXPECT_EQ(mla.auto_candidates(*testing::case_from_line(registry, ragged + " --kv_dtype fp8_e4m3")), fa3_then_fa2);
}

}  // namespace
}  // namespace kbench
