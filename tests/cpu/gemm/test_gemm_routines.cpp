// The GEMM routines without a GPU: the reference's formulas (bmm_fp8's missing batch factor
// included), flags and their validation (--tile_size refused but for 128; groupwise k a multiple of
// 128, n any size with a partial last scale block), the tensors a case describes, the cosine
// refcheck rule, and what the cuBLASLt and CUTLASS backends refuse and why.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "routines/builtin_routines.hpp"
#include "routines/gemm/gemm_case.hpp"

#include "case_from_line.hpp"

#if KBENCH_HAVE_CUBLAS
#include "backends/cublas/cublaslt_gemm.hpp"
#endif
#if KBENCH_HAVE_CUTLASS
#include "backends/cutlass/cutlass_gemm.hpp"
#endif

namespace kbench {
namespace {

using kernels::gemm::ScaleMajor;

class GemmRoutines : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();

  std::unique_ptr<Case> make(const std::string& line) { return testing::case_from_line(registry, line); }
  const GemmProblem& problem(const std::unique_ptr<Case>& c) { return static_cast<const GemmCase&>(*c).problem(); }
  std::string case_error(const std::string& line) { return testing::case_error_of(registry, line); }
  // Why `routine`'s backend `name` refuses the case of `flags` ("" where it takes it).
  std::string refusal(const std::string& routine, const std::string& flags, const std::string& name) {
    const auto c = make("-R " + routine + " " + flags);
    const Backend* backend = registry.find(routine)->find_backend(name);
    if (backend == nullptr) return "no backend " + name;
    const Support s = backend->can_implement(*c);
    return s ? "" : s.reason;
  }
};

TEST_F(GemmRoutines, FormulasAreTheReferences) {
  const double m = 4096, n = 7168, k = 16384;
  const auto groupwise = make("-R gemm_fp8_nt_groupwise --m 4096 --n 7168 --k 16384 --backends cutlass");
  EXPECT_DOUBLE_EQ(groupwise->flops(), 2 * m * n * k);
  EXPECT_DOUBLE_EQ(groupwise->bytes(), m * k + n * k + m * n * 2);  // scales not counted
  const auto group = make("-R group_gemm_fp8_nt_groupwise --m 1024 --n 4096 --k 7168 --group_size 8 --out_dtype float16");
  EXPECT_DOUBLE_EQ(group->flops(), 2.0 * 1024 * 4096 * 7168 * 8);
  EXPECT_DOUBLE_EQ(group->bytes(), 8 * (1024.0 * 7168 + 4096.0 * 7168) + 8 * 1024.0 * 4096 * 2);
  const auto fp4 = make("-R mm_fp4 --m 4096 --n 7168 --k 16384 --use_nvfp4 --use_128x4_sf_layout");
  EXPECT_DOUBLE_EQ(fp4->flops(), 2 * m * n * k);
  EXPECT_DOUBLE_EQ(fp4->bytes(), 0.5 * m * k + 0.5 * n * k + m * n * 2);
  const auto bf16 = make("-R mm_bf16 --m 8192 --n 8192 --k 8192 --bias");
  const double e = 8192;
  EXPECT_DOUBLE_EQ(bf16->flops(), 2 * e * e * e + e * e);
  EXPECT_DOUBLE_EQ(bf16->bytes(), 2 * e * e + 2 * e * e + e * e * 2 + 2 * e);
  const auto bf16_fp32 = make("-R mm_bf16 --m 8192 --n 8192 --k 8192 --out_dtype float32");
  EXPECT_DOUBLE_EQ(bf16_fp32->bytes(), 2 * e * e + 2 * e * e + e * e * 4);
  const auto bmm_bf16 = make("-R bmm_bf16 --batch_size 4 --m 64 --n 128 --k 256");
  EXPECT_DOUBLE_EQ(bmm_bf16->flops(), 2.0 * 4 * 64 * 128 * 256);
  EXPECT_DOUBLE_EQ(bmm_bf16->bytes(), 4 * (2.0 * 64 * 256 + 2.0 * 256 * 128 + 64.0 * 128 * 2));
  const auto fp8 = make("-R mm_fp8 --m 64 --n 1024 --k 7168");
  EXPECT_DOUBLE_EQ(fp8->bytes(), 64.0 * 7168 + 1024.0 * 7168 + 2 * 64.0 * 1024);
}

TEST_F(GemmRoutines, BmmFp8BytesLackTheBatchFactorAsTheReferences) {
  // DEFECT kept for the CSV: FLOPs count every batch, bytes one batch entry's.
  const auto c = make("-R bmm_fp8 --batch_size 256 --m 1 --n 1024 --k 7168 --input_dtype fp8_e4m3 --mat2_dtype fp8_e5m2");
  EXPECT_DOUBLE_EQ(c->flops(), 2.0 * 256 * 1 * 1024 * 7168);
  EXPECT_DOUBLE_EQ(c->bytes(), 1.0 * 7168 + 1024.0 * 7168 + 1.0 * 1024 * 2);
  EXPECT_DOUBLE_EQ(make("-R bmm_fp8 --batch_size 1 --m 1 --n 1024 --k 7168")->bytes(), c->bytes());
}

TEST_F(GemmRoutines, FlagsAndDefaults) {
  const GemmProblem& d = problem(make("-R gemm_fp8_nt_groupwise --m 16 --n 1024 --k 7168"));
  EXPECT_EQ(d.tile, 128);
  EXPECT_EQ(d.major, ScaleMajor::mn);
  EXPECT_EQ(d.out_dtype, DType::bfloat16);
  EXPECT_EQ(d.a_dtype, DType::fp8_e4m3);
  EXPECT_EQ(d.mma_sm, 1);
  EXPECT_EQ(problem(make("-R gemm_fp8_nt_groupwise --m 16 --n 1024 --k 7168 --scale_major_mode K --mma_sm 2")).major, ScaleMajor::k);
  EXPECT_EQ(problem(make("-R group_gemm_fp8_nt_groupwise --m 16 --n 1024 --k 7168 --group_size 3")).batch, 3);
  const GemmProblem& bmm = problem(make("-R bmm_fp8 --batch_size 64 --m 4 --n 1024 --k 7168 --input_dtype fp8_e5m2 --out_dtype float16"));
  EXPECT_EQ(bmm.batch, 64);
  EXPECT_EQ(bmm.a_dtype, DType::fp8_e5m2);
  EXPECT_EQ(bmm.b_dtype, DType::fp8_e4m3);
  EXPECT_EQ(bmm.out_dtype, DType::float16);
  // The BF16 GEMMs draw bfloat16 whatever the FP8 defaults of the dtype flags say.
  EXPECT_EQ(problem(make("-R mm_bf16 --m 8 --n 16 --k 32")).a_dtype, DType::bfloat16);
  EXPECT_EQ(problem(make("-R mm_bf16 --m 8 --n 16 --k 32 --input_dtype bfloat16")).ignored_flags,
            (std::vector<std::string>{"input_dtype"}));
  EXPECT_EQ(problem(make("-R bmm_fp8 --m 8 --n 16 --k 32 --tile_size 64")).ignored_flags,
            (std::vector<std::string>{"tile_size"}));
  EXPECT_EQ(registry.find("bmm_fp8")->default_backends(), (std::vector<std::string>{"cublas"}));
  EXPECT_EQ(registry.find("mm_bf16")->default_backends(), (std::vector<std::string>{"cublaslt"}));
  EXPECT_EQ(registry.find("mm_fp4")->default_backends(), (std::vector<std::string>{"cuda"}));
  EXPECT_EQ(registry.find("group_gemm_fp8_nt_groupwise")->default_backends(), (std::vector<std::string>{"cutlass"}));
  EXPECT_EQ(registry.find("mm_fp4")->backends().size(), 1u);  // kbench's own kernel alone (the reference's are Blackwell's)
  // kbench's own FP8 kernel: the default where cuBLASLt refuses the routine on Hopper.
  EXPECT_EQ(registry.find("gemm_fp8_nt_groupwise")->default_backends(), (std::vector<std::string>{"cuda"}));
  for (const char* routine :
       {"bmm_fp8", "mm_fp8", "gemm_fp8_nt_groupwise", "group_gemm_fp8_nt_groupwise", "mm_fp4", "mm_bf16", "bmm_bf16"}) {
    EXPECT_NE(registry.find(routine)->find_backend("cuda"), nullptr) << routine;
  }
  // The reference's default for the group GEMM is kbench's CUTLASS backend (absent with its reason
  // in builds without sm_90a).
  EXPECT_NE(registry.find("group_gemm_fp8_nt_groupwise")->find_backend("cutlass"), nullptr);
}

// mm_fp4's formats and scale layouts as the reference quantizes them, and what kbench's kernel
// refuses (the reasons are the kernel's, asked without a GPU).
TEST_F(GemmRoutines, MmFp4FormatsLayoutsAndRefusals) {
  using kernels::quant::BlockFormat;
  using kernels::quant::SfLayout;
  const GemmProblem& nv = problem(make("-R mm_fp4 --m 7 --n 256 --k 384 --use_nvfp4 --use_128x4_sf_layout"));
  EXPECT_EQ(nv.fp4_format(), BlockFormat::nvfp4);
  EXPECT_EQ(nv.fp4_block(), 16);
  EXPECT_EQ(nv.a_sf_layout(), SfLayout::swizzled_128x4);
  EXPECT_EQ(nv.b_sf_layout(), SfLayout::swizzled_128x4);
  EXPECT_EQ(problem(make("-R mm_fp4 --m 7 --n 256 --k 384 --use_nvfp4")).a_sf_layout(), SfLayout::swizzled_8x4);
  // MXFP4: the reference quantizes both in 128x4 whatever --use_128x4_sf_layout says.
  const GemmProblem& mx = problem(make("-R mm_fp4 --m 7 --n 256 --k 384"));
  EXPECT_EQ(mx.fp4_format(), BlockFormat::mxfp4);
  EXPECT_EQ(mx.fp4_block(), 32);
  EXPECT_EQ(mx.a_sf_layout(), SfLayout::swizzled_128x4);
  // Packed codes and scale bytes: 7 x 384 / 2 + 256 x 384 / 2 + out + 128x4 scales (128 and 256 rows).
  EXPECT_EQ(make("-R mm_fp4 --m 7 --n 256 --k 384 --use_nvfp4 --use_128x4_sf_layout")->bytes_per_copy(),
            7u * 192 + 256u * 192 + 7u * 256 * 2 + 128u * 24 + 256u * 24);
  for (const char* flags : {"--m 1 --n 128 --k 128", "--m 1000 --n 384 --k 1024 --use_nvfp4"}) {
    const std::string why = refusal("mm_fp4", flags, "cuda");
    EXPECT_TRUE(why.empty() || why.find("sm_90a") != std::string::npos) << flags << ": " << why;
  }
  EXPECT_NE(refusal("mm_fp4", "--m 4 --n 192 --k 256 --use_nvfp4", "cuda").find("n must be a multiple of 128"),
            std::string::npos);
  EXPECT_NE(refusal("mm_fp4", "--m 4 --n 256 --k 192", "cuda").find("k must be a multiple of 128"), std::string::npos);
}

TEST_F(GemmRoutines, TileSizeOtherThan128IsRefusedWithTheReason) {
  const std::string e = case_error("-R gemm_fp8_nt_groupwise --m 16 --n 1024 --k 7168 --tile_size 64");
  EXPECT_NE(e.find("--tile_size 64 is refused"), std::string::npos) << e;
  EXPECT_NE(e.find("wrong results"), std::string::npos) << e;
  EXPECT_NE(case_error("-R group_gemm_fp8_nt_groupwise --m 16 --n 1024 --k 7168 --tile_size 256").find("--tile_size 256"),
            std::string::npos);
}

TEST_F(GemmRoutines, ValidationNamesTheFlag) {
  EXPECT_NE(case_error("-R mm_bf16 --m 0 --n 8 --k 8").find("--m must be positive, got 0"), std::string::npos);
  EXPECT_NE(case_error("-R gemm_fp8_nt_groupwise --m 16 --n 1024 --k 100").find("--k 100 is not a multiple of --tile_size 128"),
            std::string::npos);
  EXPECT_NE(case_error("-R group_gemm_fp8_nt_groupwise --m 16 --n 2112 --k 100").find("--k 100"), std::string::npos);
  EXPECT_NE(case_error("-R gemm_fp8_nt_groupwise --m 16 --n 1024 --k 7168 --mma_sm 3").find("--mma_sm must be 1 or 2"),
            std::string::npos);
  EXPECT_NE(case_error("-R gemm_fp8_nt_groupwise --m 16 --n 1024 --k 7168 --out_dtype float32").find("--out_dtype float32"),
            std::string::npos);
  EXPECT_NE(case_error("-R bmm_fp8 --m 4 --n 16 --k 32 --input_dtype bfloat16").find("--input_dtype bfloat16 is not supported"),
            std::string::npos);
  EXPECT_NE(case_error("-R bmm_fp8 --m 4 --n 16 --k 32 --mat2_dtype int8").find("--mat2_dtype int8"), std::string::npos);
  EXPECT_NE(case_error("-R mm_fp8 --m 4 --n 16 --k 128 --batch_size 2").find("--batch_size must be 1 for mm_fp8"),
            std::string::npos);
  EXPECT_NE(case_error("-R mm_fp4 --m 4 --n 16 --k 48").find("MXFP4 scale block (32)"), std::string::npos);
  EXPECT_NE(case_error("-R mm_fp4 --m 4 --n 16 --k 40 --use_nvfp4").find("NVFP4 scale block (16)"), std::string::npos);
  EXPECT_NE(case_error("-R bmm_bf16 --batch_size 0 --m 4 --n 16 --k 32").find("--batch_size must be positive"),
            std::string::npos);
  EXPECT_NE(case_error("-R mm_bf16 --m 1048576 --n 16 --k 2097152").find("over 2^40"), std::string::npos);
}

// kbench's extension: n need not be a multiple of 128 (DeepSeek-V3's decode GEMM, n 2112 = 16.5 x 128),
// B's scales then have ceil(n / 128) blocks along n; the reference's formulas stay.
TEST_F(GemmRoutines, GroupwiseNNotAMultipleOf128HasAPartialLastScaleBlock) {
  const auto c = make("-R gemm_fp8_nt_groupwise --m 64 --n 2112 --k 7168");
  const GemmProblem& p = problem(c);
  EXPECT_EQ(p.n_blocks(), 17);
  EXPECT_EQ(p.k_blocks(), 56);
  EXPECT_EQ(p.b_scale_count(), 17 * 56);
  EXPECT_EQ(p.a_scale_count(), 64 * 56);
  EXPECT_DOUBLE_EQ(c->bytes(), 64.0 * 7168 + 2112.0 * 7168 + 64.0 * 2112 * 2);
  EXPECT_DOUBLE_EQ(c->flops(), 2.0 * 64 * 2112 * 7168);
  EXPECT_EQ(c->tensors()[3].shape, (std::vector<int64_t>{56, 17}));  // b_scale (k/t, ceil(n/t))
  EXPECT_EQ(c->tensors()[3].stride, (std::vector<int64_t>{17, 1}));
  const auto k_major = make("-R gemm_fp8_nt_groupwise --m 64 --n 2112 --k 7168 --scale_major_mode K")->tensors();
  EXPECT_EQ(k_major[3].shape, (std::vector<int64_t>{17, 56}));
  const auto group = make("-R group_gemm_fp8_nt_groupwise --m 16 --n 200 --k 256 --group_size 3");
  EXPECT_EQ(problem(group).b_scale_count(), 3 * 2 * 2);
  EXPECT_EQ(group->tensors()[3].shape, (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(group->tensors()[3].stride, (std::vector<int64_t>{4, 2, 1}));
  EXPECT_EQ(problem(make("-R gemm_fp8_nt_groupwise --m 64 --n 1 --k 128")).b_scale_count(), 1);
}

TEST_F(GemmRoutines, TensorsAreDescribedAsTheReferencePrintsThem) {
  const auto bmm = make("-R bmm_fp8 --batch_size 4 --m 3 --n 16 --k 32")->tensors();
  ASSERT_EQ(bmm.size(), 2u);
  EXPECT_EQ(bmm[1].name, "mat2_fp8");
  EXPECT_EQ(bmm[1].shape, (std::vector<int64_t>{4, 32, 16}));  // (B, k, n) column-major view
  EXPECT_EQ(bmm[1].stride, (std::vector<int64_t>{512, 1, 32}));
  const auto mn = make("-R gemm_fp8_nt_groupwise --m 16 --n 256 --k 384")->tensors();
  ASSERT_EQ(mn.size(), 4u);
  EXPECT_EQ(mn[2].shape, (std::vector<int64_t>{3, 16}));  // a_scale (k/t, m)
  EXPECT_EQ(mn[3].shape, (std::vector<int64_t>{3, 2}));   // b_scale (k/t, n/t)
  const auto k_major = make("-R gemm_fp8_nt_groupwise --m 16 --n 256 --k 384 --scale_major_mode K")->tensors();
  EXPECT_EQ(k_major[2].shape, (std::vector<int64_t>{16, 3}));
  EXPECT_EQ(k_major[3].shape, (std::vector<int64_t>{2, 3}));
  const auto group = make("-R group_gemm_fp8_nt_groupwise --m 16 --n 256 --k 384 --group_size 2")->tensors();
  EXPECT_EQ(group[0].shape, (std::vector<int64_t>{32, 384}));
  EXPECT_EQ(group[2].shape, (std::vector<int64_t>{3, 32}));
  EXPECT_EQ(group[3].shape, (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(make("-R mm_bf16 --m 8 --n 16 --k 32 --bias")->tensors().back().name, "bias");
}

TEST_F(GemmRoutines, RefcheckRules) {
  EXPECT_EQ(problem(make("-R gemm_fp8_nt_groupwise --m 16 --n 256 --k 384")).cosine_threshold(), 0.0);
  EXPECT_EQ(problem(make("-R mm_fp4 --m 16 --n 256 --k 384")).cosine_threshold(), 0.97);
  EXPECT_EQ(problem(make("-R bmm_fp8 --m 16 --n 256 --k 384")).cosine_threshold(), 0.99);
  const std::vector<float> ref = {1.0f, -2.0f, 3.0f, 0.5f};
  const auto pass = compare_by_cosine(ref, ref, 0.99);
  ASSERT_EQ(pass.size(), 2u);
  EXPECT_EQ(pass[0].mismatches + pass[1].mismatches, 0);
  // A lost scale: cosine similarity 1, the norm check fails.
  const std::vector<float> doubled = {2.0f, -4.0f, 6.0f, 1.0f};
  const auto scaled = compare_by_cosine(ref, doubled, 0.99);
  EXPECT_EQ(scaled[0].mismatches, 0);
  EXPECT_EQ(scaled[1].mismatches, 1);
  EXPECT_NE(scaled[1].rule.find("L2 norm 2 times"), std::string::npos) << scaled[1].rule;
  const std::vector<float> unwritten(4, std::numeric_limits<float>::quiet_NaN());
  const auto poisoned = compare_by_cosine(ref, unwritten, 0.99);
  EXPECT_EQ(poisoned[0].mismatches, 1);
  EXPECT_EQ(poisoned[1].mismatches, 1);
  const std::vector<float> noisy = {1.0f, -2.0f, 3.0f, -0.5f};
  EXPECT_EQ(compare_by_cosine(ref, noisy, 0.99)[0].mismatches, 1);
}

#if KBENCH_HAVE_CUBLAS
TEST_F(GemmRoutines, CublasRefusesWhatCublasLtCannotTake) {
  EXPECT_NE(refusal("bmm_fp8", "--m 4 --n 16 --k 32 --input_dtype fp8_e5m2 --mat2_dtype fp8_e5m2", "cublas")
                .find("no FP8 GEMM with both operands fp8_e5m2"),
            std::string::npos);
  EXPECT_NE(refusal("mm_bf16", "--m 4 --n 16 --k 32 --bias --out_dtype float32", "cublaslt").find("bias"), std::string::npos);
  EXPECT_NE(refusal("gemm_fp8_nt_groupwise", "--m 64 --n 2112 --k 7168", "cublas").find("needs n a multiple of 128"),
            std::string::npos);
  // Both names reach the one backend.
  EXPECT_EQ(registry.find("mm_bf16")->find_backend("cublas"), registry.find("mm_bf16")->find_backend("cublaslt"));
  EXPECT_EQ(registry.find("bmm_fp8")->find_backend("cublaslt"), registry.find("bmm_fp8")->find_backend("cublas"));
}

TEST(CublasLtGemmShape, BlockScaleLayoutsAreTorchScaledMms) {
  backends::CublasGemmShape s;
  s.m = 5;
  s.n = 256;
  s.k = 384;  // 3 k-blocks, padded to 4 in B's layout
  s.a_dtype = s.b_dtype = DType::fp8_e4m3;
  s.scaling = backends::CublasScaling::blockwise_128;
  EXPECT_EQ(backends::a_block_scale_floats(s), 15);
  EXPECT_EQ(backends::a_block_scale_index(s, 4, 2), 2 * 5 + 4);  // [k-block][m]
  EXPECT_EQ(backends::b_block_scale_floats(s), 2 * 4);
  EXPECT_EQ(backends::b_block_scale_index(s, 1, 2), 1 * 4 + 2);  // [n-block][k-blocks padded to 4]
  EXPECT_FALSE(backends::cublaslt_gemm_unsupported(s).has_value());  // the toolkit's cuBLAS is 13
  s.batch = 2;
  EXPECT_NE(backends::cublaslt_gemm_unsupported(s).value_or("").find("one matrix at a time"), std::string::npos);
  s.batch = 1;
  s.a_dtype = DType::fp8_e5m2;
  EXPECT_NE(backends::cublaslt_gemm_unsupported(s).value_or("").find("fp8_e4m3"), std::string::npos);
  backends::CublasGemmShape bf16;
  bf16.m = bf16.n = bf16.k = 64;
  bf16.out_dtype = DType::float32;
  EXPECT_FALSE(backends::cublaslt_gemm_unsupported(bf16).has_value());
  bf16.b_dtype = DType::float16;
  EXPECT_TRUE(backends::cublaslt_gemm_unsupported(bf16).has_value());
  bf16.b_dtype = bf16.a_dtype;
  bf16.k = 41;  // 82-byte rows: cuBLASLt found no algorithm on the H100
  EXPECT_NE(backends::cublaslt_gemm_unsupported(bf16).value_or("").find("16-byte aligned"), std::string::npos);
  bf16.k = 64;
  bf16.n = 70;
  bf16.out_dtype = DType::bfloat16;  // 140-byte output rows
  EXPECT_NE(backends::cublaslt_gemm_unsupported(bf16).value_or("").find("16-byte aligned"), std::string::npos);
  bf16.n = 64;
  bf16.out_dtype = DType::float16;  // bf16 in, fp16 out: no cuBLASLt algorithm on the H100
  EXPECT_NE(backends::cublaslt_gemm_unsupported(bf16).value_or("").find("input type or float32"), std::string::npos);
}
#endif

#if KBENCH_HAVE_CUTLASS
TEST_F(GemmRoutines, CutlassRefusesWhatItsKernelsCannotTake) {
  EXPECT_EQ(refusal("gemm_fp8_nt_groupwise", "--m 7 --n 256 --k 384 --scale_major_mode K --out_dtype float16", "cutlass"), "");
  EXPECT_EQ(refusal("gemm_fp8_nt_groupwise", "--m 64 --n 2112 --k 7168", "cutlass"), "");  // a partial last n-block
  EXPECT_NE(refusal("gemm_fp8_nt_groupwise", "--m 64 --n 2100 --k 7168", "cutlass").find("n 2100 is not a multiple of 8"),
            std::string::npos);
  EXPECT_EQ(refusal("bmm_fp8", "--batch_size 3 --m 5 --n 48 --k 64 --out_dtype float16", "cutlass"), "");
  EXPECT_EQ(refusal("mm_fp8", "--m 37 --n 96 --k 256", "cutlass"), "");
  EXPECT_EQ(refusal("bmm_bf16", "--batch_size 3 --m 31 --n 40 --k 72", "cutlass"), "");
  EXPECT_NE(refusal("bmm_fp8", "--m 4 --n 16 --k 32 --input_dtype fp8_e5m2", "cutlass").find("fp8_e4m3 operands only"),
            std::string::npos);
  EXPECT_NE(refusal("mm_bf16", "--m 4 --n 16 --k 32 --bias", "cutlass").find("no bias"), std::string::npos);
  EXPECT_NE(refusal("mm_bf16", "--m 4 --n 16 --k 32 --out_dtype float16", "cutlass").find("bfloat16 only"),
            std::string::npos);
  EXPECT_NE(refusal("mm_fp8", "--m 4 --n 16 --k 40", "cutlass").find("k 40 is not a multiple of 16"), std::string::npos);
  EXPECT_NE(refusal("mm_bf16", "--m 4 --n 36 --k 32", "cutlass").find("n 36 is not a multiple of 8"), std::string::npos);
  EXPECT_EQ(refusal("group_gemm_fp8_nt_groupwise", "--group_size 3 --m 7 --n 256 --k 384 --scale_major_mode K", "cutlass"),
            "");
  EXPECT_EQ(refusal("group_gemm_fp8_nt_groupwise", "--m 16 --n 1024 --k 7168 --out_dtype float16", "cutlass"), "");
  // Registered where the reference lists cutlass and kbench has a kernel: not on the FP4 GEMM.
  EXPECT_EQ(registry.find("mm_fp4")->find_backend("cutlass"), nullptr);
}

TEST(CutlassGemmShape, BlockScaleLayoutsAreMnMajorWithPaddedRows) {
  backends::CutlassGemmShape s{1, 5, 256, 384, backends::CutlassGemmKind::fp8_blockwise, DType::bfloat16};
  EXPECT_EQ(backends::cutlass_a_scale_stride(s), 8);  // 5 rows padded to 16 bytes of floats
  EXPECT_EQ(backends::cutlass_a_block_scale_floats(s), 3 * 8);
  EXPECT_EQ(backends::cutlass_a_block_scale_index(s, 4, 2), 2 * 8 + 4);  // [k-block][padded m]
  EXPECT_EQ(backends::cutlass_b_block_scale_floats(s), 3 * 2);
  EXPECT_EQ(backends::cutlass_b_block_scale_index(s, 1, 2), 2 * 2 + 1);  // [k-block][n-block]
  // m a multiple of 4: exactly the reference's MN-major layouts, which the backend passes unchanged.
  s.m = 64;
  for (const int64_t row : {0, 17, 63}) {
    for (const int64_t k_block : {0, 2}) {
      EXPECT_EQ(backends::cutlass_a_block_scale_index(s, row, k_block),
                kernels::gemm::a_scale_offset(ScaleMajor::mn, s.m, 3, row, k_block));
      EXPECT_EQ(backends::cutlass_b_block_scale_index(s, 1, k_block),
                kernels::gemm::b_scale_offset(ScaleMajor::mn, 2, 3, 1, k_block));
    }
  }
  EXPECT_FALSE(backends::cutlass_gemm_unsupported(s).has_value());
  s.batch = 2;
  EXPECT_NE(backends::cutlass_gemm_unsupported(s).value_or("").find("one matrix at a time"), std::string::npos);
  s.batch = 1;
  s.k = 336;  // 16-byte rows, not whole scale blocks
  EXPECT_NE(backends::cutlass_gemm_unsupported(s).value_or("").find("k must be a multiple of the 128 scale block"),
            std::string::npos);
}

// n 2112: 17 n-blocks, the last holding 64 rows; the kernel's B layout is the reference's MN-major one.
TEST(CutlassGemmShape, BScalesCoverAPartialLastNBlock) {
  const backends::CutlassGemmShape s{1, 64, 2112, 7168, backends::CutlassGemmKind::fp8_blockwise, DType::bfloat16};
  EXPECT_FALSE(backends::cutlass_gemm_unsupported(s).has_value());
  EXPECT_EQ(backends::cutlass_b_block_scale_floats(s), 56 * 17);
  for (const int64_t n_block : {0, 15, 16}) {
    for (const int64_t k_block : {0, 55}) {
      EXPECT_EQ(backends::cutlass_b_block_scale_index(s, n_block, k_block),
                kernels::gemm::b_scale_offset(ScaleMajor::mn, 17, 56, n_block, k_block));
    }
  }
  EXPECT_EQ(backends::cutlass_b_block_scale_index(s, 16, 55), 56 * 17 - 1);
}

TEST(CutlassGemmShape, GroupedBlockScaleLayoutsAreMnMajorPerGroupUnpadded) {
  // Per group, as the grouped kernel derives them from m: A's rows m apart, whatever m is (its scales
  // load float by float, not by TMA).
  backends::CutlassGemmShape s{3, 5, 256, 384, backends::CutlassGemmKind::fp8_blockwise_grouped, DType::bfloat16};
  EXPECT_EQ(backends::cutlass_a_scale_stride(s), 5);
  EXPECT_EQ(backends::cutlass_a_block_scale_floats(s), 3 * 5);
  EXPECT_EQ(backends::cutlass_a_block_scale_index(s, 4, 2), 2 * 5 + 4);  // [k-block][m]
  EXPECT_EQ(backends::cutlass_b_block_scale_floats(s), 3 * 2);
  EXPECT_EQ(backends::cutlass_b_block_scale_index(s, 1, 2), 2 * 2 + 1);  // [k-block][n-block]
  EXPECT_FALSE(backends::cutlass_gemm_unsupported(s).has_value());       // any number of groups
  s.k = 144;
  EXPECT_NE(backends::cutlass_gemm_unsupported(s).value_or("").find("128 scale block"), std::string::npos);
}
#endif

}  // namespace
}  // namespace kbench
