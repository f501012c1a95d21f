// GPU tests of kbench's MLA decode kernels fa2 (kernels/attention/mla/mla_fa2.cu, sm_80+) and fa3
// (mla_fa3.cu, sm_90a: skipped elsewhere) against the fp32 reference kernel (launch_mla_reference),
// with the routine's tolerance (rtol 0.2, atol 0.01, as torch.isclose), the same matrix for both:
// heads 16 / 32 / 128, 1 / 2 / 4 query tokens, page sizes 1 / 16 / 64 / 128, ragged lengths (kv_len
// = s_qo, lengths off the kernels' 32- and 64-key tiles), batch 1, small batches that split the KV
// and large ones that do not, and forced plans with many (partly empty) splits. Inputs are random
// (q_pe too); the output is poisoned first, so every element must be written. FP8 e4m3 KV (bf16 or
// fp8 q) as the routine builds it: values times 10 quantised, scales 0.1 (kpe's also 0.2), checked
// with the routine's fp8 tolerance (rtol 0.5, atol 0.1); the reference reads the same fp8 values.
// Both kernels on every fp8 case; fa3's on pages of whole tiles (TMA) and others (gathers), its
// uniform grid and its balanced schedule.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kbench/dtype.hpp"
#include "kernels/attention/mla/mla.hpp"
#include "kernels/attention/mla/mla_fa2.hpp"
#include "kernels/attention/mla/mla_fa3.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/attention/paged_kv_layout.hpp"

namespace kbench {
namespace {

struct KernelCase {
  std::vector<int32_t> lens;
  int s_qo = 1;
  int num_heads = 16;
  int page_size = 64;
  std::optional<int> forced_split_keys;  // a plan with this many keys per split instead of the kernel's
  int expect_splits = 0;                 // 1: no split expected; 2: more than one; 0: either
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
  float kpe_scale_factor = 1.0f;         // fp8: kpe_scale = kpe_scale_factor * ckv_scale
  std::optional<bool> expect_balanced{}; // fa3's plan a balanced schedule (or not); unset: either
  std::optional<int> plan_sm_count{};    // plan for this many SMs instead of the device's
  bool force_balanced = false;           // fa3: the balanced schedule whatever the plan's model says
};

KernelCase fp8(KernelCase c, bool fp8_q, float kpe_scale_factor = 1.0f) {
  c.kv_dtype = DType::fp8_e4m3;
  if (fp8_q) c.q_dtype = DType::fp8_e4m3;
  c.kpe_scale_factor = kpe_scale_factor;
  return c;
}

std::string describe(const KernelCase& c) {
  return "batch " + std::to_string(c.lens.size()) + " lens " + lengths_text(c.lens) + " s_qo " +
         std::to_string(c.s_qo) + " heads " + std::to_string(c.num_heads) + " page " + std::to_string(c.page_size) +
         " q " + std::string(dtype_name(c.q_dtype)) + " kv " + std::string(dtype_name(c.kv_dtype)) +
         (c.kpe_scale_factor != 1.0f ? " kpe_scale x" + std::to_string(c.kpe_scale_factor) : "");
}

constexpr float kFp8Magnitude = 10.0f;  // fp8 tensors hold N(0, 10^2), dequantised by 0.1 (as mla_case)

DeviceBuffer random_normal(DType dtype, std::size_t count, uint64_t seed, cudaStream_t stream) {
  const bool fp8 = dtype == DType::fp8_e4m3;
  DeviceBuffer b(count * (fp8 ? 1 : 2));
  KBENCH_CUDA_CHECK(kernels::fill_normal(b.get(), dtype, static_cast<int64_t>(count), seed, 0.0f,
                                         fp8 ? kFp8Magnitude : 1.0f, stream));
  return b;
}

const char* kernel_name(kernels::MlaKernel kernel) { return kernel == kernels::MlaKernel::fa3 ? "fa3" : "fa2"; }

// Skips the test where the kernel cannot run on this device (fa3: sm_90a only).
#define KBENCH_REQUIRE_MLA_KERNEL(kernel)                                                           \
  do {                                                                                              \
    KBENCH_REQUIRE_GPU();                                                                           \
    if ((kernel) == kernels::MlaKernel::fa3 && kernels::mla_fa3_available() != cudaSuccess) {      \
      (void)cudaGetLastError();                                                                     \
      GTEST_SKIP() << "kbench's MLA fa3 kernel needs an sm_90 device and a build with sm_90a";      \
    }                                                                                               \
  } while (0)

void expect_matches_reference(kernels::MlaKernel kernel, const KernelCase& c) {
  SCOPED_TRACE(std::string(kernel_name(kernel)) + ": " + describe(c));
  const bool fa3 = kernel == kernels::MlaKernel::fa3;
  CudaStream stream;
  const int batch = static_cast<int>(c.lens.size());
  const int max_len = *std::max_element(c.lens.begin(), c.lens.end());
  const PagedKvLayout pages = make_paged_kv_layout(c.lens, max_len, c.page_size, 7);
  const std::size_t rows = static_cast<std::size_t>(batch) * c.s_qo;
  const std::size_t tokens = static_cast<std::size_t>(pages.total_pages) * c.page_size;
  const DeviceBuffer q_nope = random_normal(c.q_dtype, rows * c.num_heads * 512, 1, stream.get());
  const DeviceBuffer q_pe = random_normal(c.q_dtype, rows * c.num_heads * 64, 2, stream.get());
  const DeviceBuffer ckv = random_normal(c.kv_dtype, tokens * 512, 3, stream.get());
  const DeviceBuffer kpe = random_normal(c.kv_dtype, tokens * 64, 4, stream.get());
  const auto upload = [&](const std::vector<int32_t>& v) {
    DeviceBuffer b(std::max<std::size_t>(v.size(), 1) * sizeof(int32_t));
    KBENCH_CUDA_CHECK(cudaMemcpy(b.get(), v.data(), v.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
    return b;
  };
  const DeviceBuffer indptr = upload(pages.indptr), indices = upload(pages.indices), lens = upload(c.lens);

  kernels::MlaParams p;
  p.q_nope = q_nope.get();
  p.q_pe = q_pe.get();
  p.ckv = ckv.get();
  p.kpe = kpe.get();
  p.kv_indptr = indptr.as<int32_t>();
  p.kv_indices = indices.as<int32_t>();
  p.kv_len = lens.as<int32_t>();
  p.batch = batch;
  p.s_qo = c.s_qo;
  p.num_heads = c.num_heads;
  p.page_size = c.page_size;
  p.sm_scale = static_cast<float>(1.0 / std::sqrt(192.0));
  p.q_dtype = c.q_dtype;
  p.kv_dtype = c.kv_dtype;
  if (c.q_dtype == DType::fp8_e4m3) p.q_scale = 1.0f / kFp8Magnitude;
  if (c.kv_dtype == DType::fp8_e4m3) {
    p.ckv_scale = 1.0f / kFp8Magnitude;
    p.kpe_scale = c.kpe_scale_factor / kFp8Magnitude;
  }
  const bool fp8_inputs = c.q_dtype == DType::fp8_e4m3 || c.kv_dtype == DType::fp8_e4m3;
  const double rtol = fp8_inputs ? 0.5 : 0.2, atol = fp8_inputs ? 0.1 : 0.01;
  ASSERT_TRUE(fa3 ? kernels::mla_fa3_supported(p) : kernels::mla_fa2_supported(p));

  const int sm_count = c.plan_sm_count.value_or(testing::device_sm_count());
  kernels::MlaPlan plan = fa3 ? kernels::plan_mla_fa3(p, c.lens, sm_count) : kernels::plan_mla_fa2(p, c.lens, sm_count);
  if (c.force_balanced) plan = kernels::make_mla_balanced_schedule(p, c.lens, plan.rows_per_cta, 64, sm_count);
  if (c.forced_split_keys) {
    plan = kernels::plan_mla_split(p, plan.rows_per_cta, 1, *c.forced_split_keys, max_len, sm_count);
    plan.split_keys = *c.forced_split_keys;
    plan.num_splits = (max_len + plan.split_keys - 1) / plan.split_keys;
  }
  if (c.expect_splits == 1) {
    EXPECT_EQ(plan.num_splits, 1);
  } else if (c.expect_splits == 2) {
    EXPECT_GT(plan.num_splits, 1);
  }
  if (c.expect_balanced) {
    EXPECT_EQ(plan.balanced(), *c.expect_balanced);
  }
  const std::size_t out_count = rows * c.num_heads * 512;
  DeviceBuffer ref(out_count * sizeof(float));
  DeviceBuffer out(out_count * 2);
  const std::size_t ws_bytes = plan.workspace_bytes(p);
  DeviceBuffer workspace(std::max<std::size_t>(ws_bytes, 16));
  KBENCH_CUDA_CHECK(kernels::poison(workspace.get(), static_cast<int64_t>(workspace.bytes()), stream.get()));
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  KBENCH_CUDA_CHECK(kernels::upload_mla_schedule(p, plan, workspace.get()));
  ASSERT_EQ(kernels::launch_mla_reference(p, ref.as<float>(), stream.get()), cudaSuccess);
  void* ws = ws_bytes > 0 ? workspace.get() : nullptr;
  // Two launches, the output poisoned before each: the one checked must not depend on what the one
  // before left in the workspace or the output.
  for (int launch = 0; launch < 2; ++launch) {
    KBENCH_CUDA_CHECK(kernels::poison(out.get(), static_cast<int64_t>(out.bytes()), stream.get()));
    ASSERT_EQ(fa3 ? kernels::launch_mla_fa3(p, plan, out.get(), ws, stream.get())
                  : kernels::launch_mla_fa2(p, plan, out.get(), ws, stream.get()),
              cudaSuccess);
  }
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  DeviceBuffer out_f(out_count * sizeof(float));
  KBENCH_CUDA_CHECK(kernels::convert_to_float(out.get(), DType::bfloat16, static_cast<int64_t>(out_count),
                                              out_f.as<float>(), stream.get()));
  const auto got = testing::to_host<float>(out_f.get(), static_cast<int64_t>(out_count), stream.get());
  const auto want = testing::to_host<float>(ref.get(), static_cast<int64_t>(out_count), stream.get());

  double worst_abs = 0;
  std::size_t bad = 0, first_bad = out_count;
  for (std::size_t e = 0; e < out_count; ++e) {
    const double d = std::abs(static_cast<double>(got[e]) - want[e]);
    if (!std::isfinite(got[e]) || !(d <= atol + rtol * std::abs(want[e]))) {
      if (bad++ == 0) first_bad = e;
    }
    if (std::isfinite(got[e])) worst_abs = std::max(worst_abs, d);
  }
  std::cout << "[mla " << kernel_name(kernel) << "] " << describe(c) << ": " << plan.rows_per_cta << " rows per CTA, "
            << (plan.balanced() ? "balanced over " + std::to_string(plan.part_begin.size() - 1) + " CTAs, " : "")
            << plan.num_splits << " splits of " << plan.split_keys << " keys, worst abs error " << worst_abs << "\n";
  if (bad > 0) {
    const std::size_t row = first_bad / 512 / c.num_heads;
    ADD_FAILURE() << bad << " of " << out_count << " elements differ; first: query row " << row << " head "
                  << (first_bad / 512) % c.num_heads << " dim " << first_bad % 512 << ": got " << got[first_bad]
                  << ", reference " << want[first_bad];
  }
  // bf16 output and bf16 P: far inside the refcheck's tolerance on these inputs (fp8 values are
  // exact in bf16, so fp8 inputs do no worse; kpe times a scale ratio rounds once to bf16).
  EXPECT_LT(worst_abs, 0.05);
}

// Heads x query tokens x page sizes on a small ragged batch (kv_len = s_qo, lengths off the tile).
// A matrix case's test name: h<heads>_q<tokens>_p<page size>.
// (Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string temporaries.)
std::string matrix_name(int heads, int s_qo, int page) {
  std::string name = "h";
  name += std::to_string(heads);
  name += "_q";
  name += std::to_string(s_qo);
  name += "_p";
  name += std::to_string(page);
  return name;
}

// The bf16 matrix case (heads, s_qo, page size) and the plain cases, for either kernel.
using MatrixParam = std::tuple<int, int, int>;

void expect_matrix_case(kernels::MlaKernel kernel, const MatrixParam& param) {
  const auto [heads, s_qo, page] = param;
  expect_matches_reference(kernel, {{s_qo, 37, 300, 1029, 64}, s_qo, heads, page, std::nullopt, 0});
}

void expect_batch_one_splits_the_kv(kernels::MlaKernel kernel) {
  expect_matches_reference(kernel, {{5000}, 1, 16, 64, std::nullopt, 2});
  expect_matches_reference(kernel, {{4099}, 2, 128, 16, std::nullopt, 2});
  expect_matches_reference(kernel, {{3}, 3, 48, 1, std::nullopt, 0});  // 144 rows: three 64-row blocks, the last one partial
}

// (fa3 balances the first batch's unequal lengths over the SMs instead, splitting a few requests.)
void expect_large_batch_needs_no_split(kernels::MlaKernel kernel) {
  const bool fa3 = kernel == kernels::MlaKernel::fa3;
  std::mt19937 rng(5);
  std::vector<int32_t> lens(300);
  for (auto& len : lens) len = 1 + static_cast<int32_t>(rng() % 700);
  KernelCase first{lens, 1, 16, 64, std::nullopt, fa3 ? 0 : 1};
  first.expect_balanced = fa3;
  expect_matches_reference(kernel, first);
  lens.resize(140);
  for (auto& len : lens) len = std::max(len, 2);
  expect_matches_reference(kernel, {lens, 2, 128, 32, std::nullopt, 1});
}

// One split per KV tile of the longest request (32 keys fa2, 64 fa3), and two: the short requests'
// later splits are empty, and the early query tokens' rows see none of the last split's keys.
void expect_many_small_splits(kernels::MlaKernel kernel) {
  const int tile = kernel == kernels::MlaKernel::fa3 ? 64 : 32;
  expect_matches_reference(kernel, {{4, 33, 700, 95}, 4, 16, 16, tile, 0});
  expect_matches_reference(kernel, {{2, 64, 257}, 2, 32, 1, 2 * tile, 0});
}

std::string matrix_param_name(const ::testing::TestParamInfo<MatrixParam>& info) {
  return matrix_name(std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param));
}

const auto kMatrix = ::testing::Combine(::testing::Values(16, 32, 128), ::testing::Values(1, 2, 4),
                                        ::testing::Values(1, 16, 64, 128));

class MlaFa2Matrix : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(MlaFa2Matrix, MatchesTheReference) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa2);
  expect_matrix_case(kernels::MlaKernel::fa2, GetParam());
}

INSTANTIATE_TEST_SUITE_P(HeadsTokensPages, MlaFa2Matrix, kMatrix, matrix_param_name);

TEST(MlaFa2, BatchOneSplitsTheKv) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa2);
  expect_batch_one_splits_the_kv(kernels::MlaKernel::fa2);
}

TEST(MlaFa2, LargeBatchNeedsNoSplit) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa2);
  expect_large_batch_needs_no_split(kernels::MlaKernel::fa2);
}

TEST(MlaFa2, ManySmallSplitsWithEmptyOnes) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa2);
  expect_many_small_splits(kernels::MlaKernel::fa2);
}

class MlaFa3Matrix : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(MlaFa3Matrix, MatchesTheReference) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  expect_matrix_case(kernels::MlaKernel::fa3, GetParam());
}

INSTANTIATE_TEST_SUITE_P(HeadsTokensPages, MlaFa3Matrix, kMatrix, matrix_param_name);

TEST(MlaFa3, BatchOneSplitsTheKv) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  expect_batch_one_splits_the_kv(kernels::MlaKernel::fa3);
}

TEST(MlaFa3, LargeBatchNeedsNoSplit) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  expect_large_batch_needs_no_split(kernels::MlaKernel::fa3);
}

TEST(MlaFa3, ManySmallSplitsWithEmptyOnes) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  expect_many_small_splits(kernels::MlaKernel::fa3);
}

// fa3's balanced schedule: random lengths over the device's SMs (a CTA's segments from up to three
// requests, some split and merged, others written directly), and forced over 20 and 7 SMs, so that
// each CTA works through many segments, reloading Q for each (16 and 128 heads, 1 to 4 query tokens,
// pages of 1 to 64, several row blocks a request side by side).
TEST(MlaFa3, BalancedScheduleMatchesTheReference) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  std::mt19937 rng(11);
  std::vector<int32_t> lens(128);
  for (auto& len : lens) len = 1 + static_cast<int32_t>(rng() % 2048);
  KernelCase random{lens, 1, 16, 64, std::nullopt, 2};
  random.expect_balanced = true;
  expect_matches_reference(kernels::MlaKernel::fa3, random);
  KernelCase few{{2, 700, 4099, 130, 64, 65, 2000, 3, 1500}, 2, 128, 16, std::nullopt, 2};
  few.force_balanced = true;
  few.expect_balanced = true;
  few.plan_sm_count = 20;  // five runs of the four row blocks
  expect_matches_reference(kernels::MlaKernel::fa3, few);
  lens.resize(50);
  for (auto& len : lens) len = 4 + static_cast<int32_t>(rng() % 900);
  KernelCase tokens{lens, 4, 16, 1, std::nullopt, 0};
  tokens.force_balanced = true;
  tokens.expect_balanced = true;
  tokens.plan_sm_count = 7;
  expect_matches_reference(kernels::MlaKernel::fa3, tokens);
}

// The two headline shapes at a reduced batch: 16 heads x 1 token (a quarter of the 64-row block
// used) and 128 heads x 2 tokens (four full blocks), page 64, long and equal lengths.
TEST(MlaFa3, HeadlineShapes) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  expect_matches_reference(kernels::MlaKernel::fa3, {std::vector<int32_t>(8, 8192), 1, 16, 64, std::nullopt, 0});
  expect_matches_reference(kernels::MlaKernel::fa3, {std::vector<int32_t>(4, 8192), 2, 128, 64, std::nullopt, 0});
}

// FP8 e4m3 KV, bf16 or fp8 q: heads x query tokens x page sizes on the small ragged batch (splits).
using Fp8MatrixParam = std::tuple<int, int, int, bool>;

void expect_fp8_matrix_case(kernels::MlaKernel kernel, const Fp8MatrixParam& param) {
  const auto [heads, s_qo, page, fp8_q] = param;
  expect_matches_reference(kernel, fp8({{s_qo, 37, 300, 1029, 64}, s_qo, heads, page, std::nullopt, 0}, fp8_q));
}

// Batch one split, three 64-row blocks, a large ragged batch (fa3: balanced), many partly empty
// splits; bf16 and fp8 q.
void expect_fp8_splits_and_batches(kernels::MlaKernel kernel) {
  const bool fa3 = kernel == kernels::MlaKernel::fa3;
  for (const bool fp8_q : {false, true}) {
    expect_matches_reference(kernel, fp8({{5000}, 1, 16, 64, std::nullopt, 2}, fp8_q));
    expect_matches_reference(kernel, fp8({{4099}, 2, 128, 16, std::nullopt, 2}, fp8_q));
    expect_matches_reference(kernel, fp8({{3}, 3, 48, 1, std::nullopt, 0}, fp8_q));  // three 64-row blocks
    std::mt19937 rng(5);
    std::vector<int32_t> lens(300);
    for (auto& len : lens) len = 1 + static_cast<int32_t>(rng() % 700);
    KernelCase ragged = fp8({lens, 1, 16, 64, std::nullopt, fa3 ? 0 : 1}, fp8_q);
    ragged.expect_balanced = fa3;
    expect_matches_reference(kernel, ragged);
    lens.resize(140);
    for (auto& len : lens) len = std::max(len, 2);
    expect_matches_reference(kernel, fp8({lens, 2, 128, 32, std::nullopt, 1}, fp8_q));
    const int tile = fa3 ? 64 : 32;
    expect_matches_reference(kernel, fp8({{4, 33, 700, 95}, 4, 16, 16, tile, 0}, fp8_q));  // many, partly empty, splits
  }
}

void expect_fp8_kpe_scale_differs(kernels::MlaKernel kernel) {
  expect_matches_reference(kernel, fp8({{1, 37, 300, 1029, 64}, 1, 16, 64, std::nullopt, 0}, false, 2.0f));
  expect_matches_reference(kernel, fp8({{2, 37, 300, 1029, 64}, 2, 128, 1, std::nullopt, 0}, true, 0.5f));
}

const auto kFp8Matrix = ::testing::Combine(::testing::Values(16, 128), ::testing::Values(1, 2),
                                           ::testing::Values(1, 64), ::testing::Bool());

std::string fp8_matrix_param_name(const ::testing::TestParamInfo<Fp8MatrixParam>& info) {
  return matrix_name(std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param)) +
         (std::get<3>(info.param) ? "_fp8q" : "_bf16q");
}

class MlaFa2Fp8Matrix : public ::testing::TestWithParam<Fp8MatrixParam> {};

TEST_P(MlaFa2Fp8Matrix, MatchesTheReference) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa2);
  expect_fp8_matrix_case(kernels::MlaKernel::fa2, GetParam());
}

INSTANTIATE_TEST_SUITE_P(HeadsTokensPagesQ, MlaFa2Fp8Matrix, kFp8Matrix, fp8_matrix_param_name);

TEST(MlaFa2Fp8, SplitAndUnsplit) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa2);
  expect_fp8_splits_and_batches(kernels::MlaKernel::fa2);
}

TEST(MlaFa2Fp8, KpeScaleDiffersFromCkvScale) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa2);
  expect_fp8_kpe_scale_differs(kernels::MlaKernel::fa2);
}

class MlaFa3Fp8Matrix : public ::testing::TestWithParam<Fp8MatrixParam> {};

TEST_P(MlaFa3Fp8Matrix, MatchesTheReference) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  expect_fp8_matrix_case(kernels::MlaKernel::fa3, GetParam());
}

INSTANTIATE_TEST_SUITE_P(HeadsTokensPagesQ, MlaFa3Fp8Matrix, kFp8Matrix, fp8_matrix_param_name);

TEST(MlaFa3Fp8, SplitAndUnsplit) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  expect_fp8_splits_and_batches(kernels::MlaKernel::fa3);
}

TEST(MlaFa3Fp8, KpeScaleDiffersFromCkvScale) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  expect_fp8_kpe_scale_differs(kernels::MlaKernel::fa3);
}

// At most 16 query rows a request: fa3's keys-on-M kernels (fp8 KV: the transposed kernel; bf16 KV:
// the transposed bf16 kernel). On the uniform grid (splits forced: the plan may balance ragged
// lengths): 8 heads x 2 tokens (causal among them) with empty splits, 3 heads unsplit, 16 heads on
// gathered pages (1) and on pages of whole tiles, 4 heads x 4 tokens (fp8: a kpe scale apart from
// ckv's); the balanced schedule forced over 5 and 3 SMs (many segments a CTA, Q restaged for each,
// requests split over CTAs and merged, empty partials), and as the plan picks it for random lengths.
// `as` gives a case its dtypes (the kpe scale factor: fp8 only).
void expect_transposed_blocks(const std::function<KernelCase(KernelCase, float)>& as) {
  const auto fa3 = kernels::MlaKernel::fa3;
  expect_matches_reference(fa3, as({{2, 37, 300, 1029, 64}, 2, 8, 16, 64, 2}, 1.0f));
  expect_matches_reference(fa3, as({{1, 65, 128, 700}, 1, 3, 64, 4096, 1}, 1.0f));
  expect_matches_reference(fa3, as({{1, 63, 4100}, 1, 16, 1, 1024, 2}, 1.0f));
  expect_matches_reference(fa3, as({{8192, 8192, 5000}, 1, 16, 64, 2048, 2}, 1.0f));
  expect_matches_reference(fa3, as({{130, 4099}, 4, 4, 64, 128, 2}, 0.25f));
  KernelCase few = as({{2, 700, 4099, 130, 64, 65, 2000, 3, 1500}, 1, 16, 16, std::nullopt, 2}, 1.0f);
  few.force_balanced = true;
  few.expect_balanced = true;
  few.plan_sm_count = 5;
  expect_matches_reference(fa3, few);
  KernelCase tokens = as({{2, 37, 300, 1029, 64, 5, 900}, 2, 8, 1, std::nullopt, 0}, 2.0f);
  tokens.force_balanced = true;
  tokens.expect_balanced = true;
  tokens.plan_sm_count = 3;
  expect_matches_reference(fa3, tokens);
  std::mt19937 rng(13);
  std::vector<int32_t> lens(128);
  for (auto& len : lens) len = 1 + static_cast<int32_t>(rng() % 4096);
  KernelCase random = as({lens, 1, 16, 64, std::nullopt, 0}, 1.0f);
  random.expect_balanced = true;
  expect_matches_reference(fa3, random);
}

TEST(MlaFa3, TransposedBlocks) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  expect_transposed_blocks([](KernelCase c, float) { return c; });
}

TEST(MlaFa3Fp8, TransposedBlocks) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  for (const bool fp8_q : {false, true}) {
    expect_transposed_blocks([&](KernelCase c, float kpe_scale_factor) { return fp8(c, fp8_q, kpe_scale_factor); });
  }
}

// fp8 on the balanced schedule forced over few SMs (many segments a CTA, Q reloaded and widened for
// each), and the headline shapes (pages of whole tiles: every tile but the last by TMA).
TEST(MlaFa3Fp8, BalancedScheduleAndHeadlineShapes) {
  KBENCH_REQUIRE_MLA_KERNEL(kernels::MlaKernel::fa3);
  for (const bool fp8_q : {false, true}) {
    KernelCase few = fp8({{2, 700, 4099, 130, 64, 65, 2000, 3, 1500}, 2, 128, 16, std::nullopt, 2}, fp8_q);
    few.force_balanced = true;
    few.expect_balanced = true;
    few.plan_sm_count = 20;
    expect_matches_reference(kernels::MlaKernel::fa3, few);
    KernelCase tiles = fp8({{64, 700, 4099, 130, 1024, 65, 2000, 3, 1500}, 1, 16, 64, std::nullopt, 2}, fp8_q);
    tiles.force_balanced = true;
    tiles.expect_balanced = true;
    tiles.plan_sm_count = 7;
    expect_matches_reference(kernels::MlaKernel::fa3, tiles);
    expect_matches_reference(kernels::MlaKernel::fa3, fp8({std::vector<int32_t>(8, 8192), 1, 16, 64, std::nullopt, 0}, fp8_q));
    expect_matches_reference(kernels::MlaKernel::fa3, fp8({std::vector<int32_t>(4, 8192), 2, 128, 64, std::nullopt, 0}, fp8_q));
  }
}

TEST(MlaFa2, RejectsWhatItCannotTake) {
  kernels::MlaParams p;
  p.batch = 1;
  p.num_heads = 16;
  p.page_size = 64;
  p.sm_scale = 0.1f;
  EXPECT_TRUE(kernels::mla_fa2_supported(p));
  p.kpe_scale = 2.0f;  // bf16 KV: one scale for ckv and kpe
  EXPECT_FALSE(kernels::mla_fa2_supported(p));
  p.kv_dtype = DType::fp8_e4m3;  // fp8 KV: any finite kpe_scale / ckv_scale
  EXPECT_TRUE(kernels::mla_fa2_supported(p));
  p.ckv_scale = 0.0f;
  EXPECT_FALSE(kernels::mla_fa2_supported(p));
  p.ckv_scale = p.kpe_scale = 1.0f;
  p.q_dtype = DType::fp8_e4m3;
  EXPECT_TRUE(kernels::mla_fa2_supported(p));
  p.kv_dtype = DType::fp8_e5m2;
  EXPECT_FALSE(kernels::mla_fa2_supported(p));
  p.kv_dtype = DType::bfloat16;  // fp8 q takes an fp8 cache
  EXPECT_FALSE(kernels::mla_fa2_supported(p));
  EXPECT_FALSE(kernels::mla_fa2_dtypes_supported(DType::float16, DType::float16));
  p.q_dtype = DType::bfloat16;
  p.head_dim_ckv = 256;
  EXPECT_FALSE(kernels::mla_fa2_supported(p));
  p.head_dim_ckv = 512;
  const std::vector<int32_t> lens{100};
  const kernels::MlaPlan plan = kernels::plan_mla_fa2(p, lens, 132);
  EXPECT_EQ(kernels::launch_mla_fa2(p, plan, nullptr, nullptr, nullptr), cudaErrorInvalidValue);  // no tensors
  p.batch = 0;
  EXPECT_EQ(kernels::launch_mla_fa2(p, plan, nullptr, nullptr, nullptr), cudaSuccess);  // nothing to do
}

TEST(MlaFa3, RejectsWhatItCannotTake) {
  kernels::MlaParams p;
  p.batch = 1;
  p.num_heads = 16;
  p.page_size = 64;
  p.sm_scale = 0.1f;
  EXPECT_TRUE(kernels::mla_fa3_supported(p));
  p.kpe_scale = 2.0f;  // bf16 KV: one scale for ckv and kpe
  EXPECT_FALSE(kernels::mla_fa3_supported(p));
  p.kv_dtype = DType::fp8_e4m3;  // fp8 KV: any finite kpe_scale / ckv_scale
  EXPECT_TRUE(kernels::mla_fa3_supported(p));
  p.kpe_scale = 1.0f;
  p.q_dtype = DType::fp8_e4m3;
  EXPECT_TRUE(kernels::mla_fa3_supported(p));
  p.kv_dtype = DType::fp8_e5m2;
  EXPECT_FALSE(kernels::mla_fa3_supported(p));
  p.kv_dtype = DType::bfloat16;  // fp8 q takes an fp8 cache
  EXPECT_FALSE(kernels::mla_fa3_supported(p));
  EXPECT_TRUE(kernels::mla_fa3_dtypes_supported(DType::bfloat16, DType::fp8_e4m3));
  EXPECT_TRUE(kernels::mla_fa3_dtypes_supported(DType::bfloat16, DType::bfloat16));
  EXPECT_FALSE(kernels::mla_fa3_dtypes_supported(DType::float16, DType::float16));
  p.q_dtype = DType::bfloat16;
  p.head_dim_kpe = 128;
  EXPECT_FALSE(kernels::mla_fa3_supported(p));
  p.head_dim_kpe = 64;
  const std::vector<int32_t> lens{100};
  kernels::MlaPlan plan = kernels::plan_mla_fa3(p, lens, 132);
  EXPECT_EQ(plan.rows_per_cta, 64);
  EXPECT_EQ(plan.split_keys % 64, 0);
  EXPECT_EQ(kernels::launch_mla_fa3(p, plan, nullptr, nullptr, nullptr), cudaErrorInvalidValue);  // no tensors
  p.batch = 0;
  EXPECT_EQ(kernels::launch_mla_fa3(p, plan, nullptr, nullptr, nullptr), cudaSuccess);  // nothing to do
  plan.split_keys = 32;  // not whole 64-key tiles
  EXPECT_EQ(kernels::launch_mla_fa3(p, plan, nullptr, nullptr, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kbench
