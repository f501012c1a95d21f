// GPU tests of kbench's wgmma GEMM (kernels/gemm/sm90) in the grouped forms its MoE users run, the
// kernel alone: per_tensor FP8 with one B scale per group, fp16 (and bf16) operands without scales,
// and weight-only FP4 (bf16 or fp16 A, NVFP4 or MXFP4 B per group, each group its scales and
// alpha). Each case runs one plan per tile shape (and one with split-K forced) on groups of unequal
// sizes read on the device (two partitions, empty groups and a single row among them, rows past the
// last offset left to nobody) or on equal groups (1, 7 and 100 rows), over random inputs and a
// poisoned D; each group's rows are compared with kbench's reference GEMM of that group alone, and
// the rows no group owns must still be poison. Each test skips itself without a CUDA device or off
// Hopper.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_tensor.hpp"
#include "gemm/gemm_test_data.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/sm90/wgmma_gemm.hpp"

namespace {

using kbench::DeviceBuffer;
using kbench::DType;
using kbench::testing::ScopedEnv;
using kbench::testing::to_host;
namespace kg = kbench::kernels::gemm;
namespace quant = kbench::kernels::quant;
namespace wg = kbench::kernels::gemm::sm90;

bool hopper_kernel_here() { return kbench::testing::device_is_sm90() && wg::wgmma_gemm_built_for_sm90a(); }

#define KBENCH_REQUIRE_HOPPER_KERNEL()                                               \
  do {                                                                               \
    KBENCH_REQUIRE_GPU();                                                            \
    if (!hopper_kernel_here()) GTEST_SKIP() << "kbench's GEMM kernel is sm_90a";     \
  } while (0)

// The groups of A's and D's `rows` rows: equal groups (rows_per_group > 0, one partition), or row
// offsets read on the device, each partition run by the same plan.
struct Groups {
  int count;
  int64_t rows;
  int64_t rows_per_group;
  std::vector<std::vector<int32_t>> partitions;
};

Groups equal_groups(int count, int64_t rows_per_group) {
  std::vector<int32_t> offsets;
  for (int g = 0; g <= count; ++g) offsets.push_back(static_cast<int32_t>(g * rows_per_group));
  return {count, count * rows_per_group, rows_per_group, {offsets}};
}

// 1100 rows in 5 groups, twice: sizes 1, 0, 7, 100, 892 and 0, 300, 1, 0, 736 (groups across tile
// edges, empty first and middle groups); the last 100 and 63 rows belong to no group.
Groups device_groups() { return {5, 1100, 0, {{0, 1, 1, 8, 108, 1000}, {0, 0, 300, 301, 301, 1037}}}; }

std::string describe(const Groups& groups) {
  return groups.rows_per_group > 0
             ? std::to_string(groups.count) + " equal groups of " + std::to_string(groups.rows_per_group) + " rows"
             : std::to_string(groups.count) + " groups read on the device";
}

float stored_value(uint16_t bits, DType dtype) {
  if (dtype == DType::bfloat16) return __bfloat162float(__nv_bfloat16_raw{bits});
  return __half2float(__half_raw{bits});
}

// Sets reference.a and reference.b to group `group`'s operands, its rows starting at A's row
// `first_row` (m, n, k and the output are set by the caller).
using GroupOperands = std::function<void(int group, int64_t first_row, kg::ReferenceGemmParams& reference)>;

// The absolute tolerance, a fraction of a group's largest magnitude: the fp32 sums' order
// (1e-3, as the other GEMM tests), or FP8 wgmma's accumulation, which aligns each k-step's products
// to ~14 bits (up to ~2e-3 at k 1024 in the worst, linear case).
constexpr float kSumTolerance = 1e-3f;
constexpr float kFp8SumTolerance = 4e-3f;

// Rows [begin, end) of D (group `group`) against the reference GEMM of that group alone: within 2
// ulps of D's type plus `sum_tolerance` of the group's largest magnitude (the products are exact;
// the sums and D's rounding differ).
void expect_group_matches(const std::vector<uint16_t>& got, DType d_dtype, int64_t n, int64_t k, int group,
                          int64_t begin, int64_t end, const GroupOperands& operands, float sum_tolerance,
                          cudaStream_t stream) {
  const int64_t count = (end - begin) * n;
  DeviceBuffer expected(static_cast<std::size_t>(count) * sizeof(float));
  kg::ReferenceGemmParams r;
  r.m = end - begin;
  r.n = n;
  r.k = k;
  r.out_dtype = DType::float32;
  r.out = expected.as<float>();
  operands(group, begin, r);
  KBENCH_CUDA_CHECK(kg::reference_gemm(r, stream));
  const std::vector<float> want = kbench::read_as_floats(expected.get(), DType::float32, static_cast<std::size_t>(count), stream);
  float largest = 0.0f;
  for (const float v : want) largest = std::max(largest, std::fabs(v));
  ASSERT_GT(largest, 0.0f) << "group " << group;
  const float ulp = d_dtype == DType::bfloat16 ? 0x1p-7f : 0x1p-10f;
  int bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    const float value = stored_value(got[static_cast<std::size_t>(begin * n + i)], d_dtype);
    const float e = want[static_cast<std::size_t>(i)];
    if (!(std::fabs(value - e) <= 2.0f * ulp * std::fabs(e) + sum_tolerance * largest) && ++bad <= 5) {  // NaN fails
      ADD_FAILURE() << "group " << group << " row " << begin + i / n << " column " << i % n << ": " << value
                    << " against " << e;
    }
  }
  EXPECT_EQ(bad, 0) << "group " << group << " rows " << begin << ".." << end;
}

// Plans `p` (its groups, rows and D set here) once per tile shape, once with split-K forced (3 splits
// where k has the blocks) and once in clusters of 2 (128 x 256 tiles, B multicast), runs each plan on every partition of `groups` over a poisoned D,
// and compares each non-empty group with its reference; rows past the last offset stay poison. All on
// `stream`, the one the operands were made on.
void expect_groups_match_reference(wg::WgmmaGemmParams p, const Groups& groups, const GroupOperands& operands,
                                   cudaStream_t stream, float sum_tolerance = kSumTolerance) {
  SCOPED_TRACE(describe(groups) + ", n " + std::to_string(p.n) + " k " + std::to_string(p.k) + ", D " +
               std::string(kbench::dtype_name(p.d_dtype)));
  DeviceBuffer d(static_cast<std::size_t>(groups.rows * p.n) * 2);
  DeviceBuffer offsets(static_cast<std::size_t>(groups.count + 1) * sizeof(int32_t));
  p.groups = groups.count;
  p.rows = groups.rows;
  p.rows_per_group = groups.rows_per_group;
  p.row_offsets = groups.rows_per_group > 0 ? nullptr : offsets.as<int32_t>();
  p.d = d.get();
  struct PlanChoice {
    const char* tiles;
    const char* splits;
    const char* cluster;
  };
  std::vector<PlanChoice> choices = {PlanChoice{"128x256", "1", "1"}, PlanChoice{"64x128", "1", "1"},
                                     PlanChoice{nullptr, "3", "1"}, PlanChoice{"128x256", "1", "2"}};
  if (wg::wgmma_gemm_can_swap_fp4(p)) {
    choices.push_back(PlanChoice{"swapped", "1", "1"});
    choices.push_back(PlanChoice{"swapped64", "1", "1"});
  }
  for (const PlanChoice choice : choices) {
    SCOPED_TRACE(std::string("tiles ") + (choice.tiles != nullptr ? choice.tiles : "(heuristic)") + ", splits " +
                 choice.splits + ", cluster " + choice.cluster);
    const ScopedEnv tiles("KBENCH_WGMMA_GEMM_TILES", choice.tiles);
    const ScopedEnv splits("KBENCH_WGMMA_GEMM_SPLITS", choice.splits);
    const ScopedEnv cluster("KBENCH_WGMMA_GEMM_CLUSTER", choice.cluster);
    const wg::WgmmaGemm gemm(p);
    const bool fp4 = p.scaling == wg::GemmScaling::block_fp4 || p.scaling == wg::GemmScaling::weight_fp4;
    EXPECT_EQ(gemm.cluster(), std::string_view(choice.cluster) == "2" && !fp4 ? 2 : 1);
    if (choice.tiles != nullptr) {
      EXPECT_EQ(gemm.swapped_fp4(), std::string_view(choice.tiles).starts_with("swapped"));
    }
    for (const std::vector<int32_t>& bounds : groups.partitions) {
      if (groups.rows_per_group == 0) {
        KBENCH_CUDA_CHECK(cudaMemcpyAsync(offsets.get(), bounds.data(), offsets.bytes(), cudaMemcpyHostToDevice, stream));
      }
      KBENCH_CUDA_CHECK(kbench::kernels::poison(d.get(), static_cast<int64_t>(d.bytes()), stream));
      KBENCH_CUDA_CHECK(gemm.run(stream));
      const std::vector<uint16_t> got = to_host<uint16_t>(d.get(), groups.rows * p.n, stream);
      for (int g = 0; g < groups.count; ++g) {
        const int64_t begin = bounds[static_cast<std::size_t>(g)], end = bounds[static_cast<std::size_t>(g) + 1];
        if (begin < end) {
          expect_group_matches(got, p.d_dtype, p.n, p.k, g, begin, end, operands, sum_tolerance, stream);
        }
      }
      const int64_t owned = bounds.back() * p.n;
      const auto first_written = std::find_if(got.begin() + owned, got.end(), [](uint16_t bits) { return bits != 0xFFFF; });
      EXPECT_EQ(first_written, got.end()) << "row " << (first_written - got.begin()) / p.n << " belongs to no group";
    }
  }
}

// ---- per_tensor: one B scale per group ----------------------------------------------------------

// Random e4m3 A [rows][k] and B [groups][n][k], A's scale and one scale per group of B (distinct,
// 0.25 to 2), or one for all of them (b_scale_group_stride 0).
void expect_per_tensor_groups_match(const Groups& groups, int64_t n, int64_t k, DType d_dtype, int64_t b_scale_group_stride) {
  SCOPED_TRACE("b_scale_group_stride " + std::to_string(b_scale_group_stride));
  kbench::CudaStream stream;
  DeviceBuffer a(static_cast<std::size_t>(groups.rows * k)), b(static_cast<std::size_t>(groups.count * n * k));
  KBENCH_CUDA_CHECK(kbench::kernels::fill_normal(a.get(), DType::fp8_e4m3, groups.rows * k, 31, 0.0f, 1.0f, stream.get()));
  KBENCH_CUDA_CHECK(kbench::kernels::fill_normal(b.get(), DType::fp8_e4m3, groups.count * n * k, 32, 0.0f, 1.0f, stream.get()));
  std::vector<float> scales = {0.75f};  // A's, then B's
  for (int g = 0; g < groups.count; ++g) scales.push_back(0.25f + 1.75f * static_cast<float>(g + 1) / static_cast<float>(groups.count));
  DeviceBuffer scale_buffer(scales.size() * sizeof(float));
  KBENCH_CUDA_CHECK(
      cudaMemcpyAsync(scale_buffer.get(), scales.data(), scale_buffer.bytes(), cudaMemcpyHostToDevice, stream.get()));
  const float* a_scale = scale_buffer.as<float>();
  const float* b_scales = a_scale + 1;

  wg::WgmmaGemmParams p;
  p.scaling = wg::GemmScaling::per_tensor;
  p.n = n;
  p.k = k;
  p.a = a.get();
  p.b = b.get();
  p.a_dtype = p.b_dtype = DType::fp8_e4m3;
  p.d_dtype = d_dtype;
  p.a_scale = a_scale;
  p.b_scale = b_scales;
  p.b_scale_group_stride = b_scale_group_stride;
  expect_groups_match_reference(p, groups, [&](int g, int64_t first_row, kg::ReferenceGemmParams& r) {
    r.a.data = a.as<uint8_t>() + first_row * k;
    r.a.dtype = DType::fp8_e4m3;
    r.a.tensor_scale = a_scale;
    r.b.data = b.as<uint8_t>() + g * n * k;
    r.b.dtype = DType::fp8_e4m3;
    r.b.tensor_scale = b_scales + g * b_scale_group_stride;
  }, stream.get(), kFp8SumTolerance);
}

TEST(KbenchGemmGroups, PerTensorScaleOfEachGroupOfB) {
  KBENCH_REQUIRE_HOPPER_KERNEL();
  expect_per_tensor_groups_match(device_groups(), 384, 512, DType::bfloat16, 1);
  expect_per_tensor_groups_match(device_groups(), 256, 1024, DType::float16, 1);
  expect_per_tensor_groups_match(equal_groups(3, 1), 256, 256, DType::bfloat16, 1);
  expect_per_tensor_groups_match(equal_groups(4, 7), 640, 384, DType::float16, 1);
  expect_per_tensor_groups_match(equal_groups(3, 100), 512, 512, DType::bfloat16, 1);
}

// kMaxDeviceGroups groups (an MoE's 512 experts) of 0 to 300 rows, two m-blocks for many of them (as
// an MoE's experts at ~128 rows each), several empty: the tile order's bands stay within a group.
Groups many_device_groups() {
  Groups groups{wg::kMaxDeviceGroups, 0, 0, {std::vector<int32_t>{0}}};
  uint32_t state = 12345u;
  for (int g = 0; g < groups.count; ++g) {
    state = state * 1664525u + 1013904223u;
    const int32_t size = g % 37 == 5 ? 0 : static_cast<int32_t>(100 + (state >> 8) % 60) * (g % 11 == 0 ? 2 : 1);
    groups.partitions[0].push_back(groups.partitions[0].back() + size);
  }
  groups.rows = groups.partitions[0].back() + 5;
  return groups;
}

TEST(KbenchGemmGroups, MostDeviceGroups) {
  KBENCH_REQUIRE_HOPPER_KERNEL();
  expect_per_tensor_groups_match(many_device_groups(), 256, 256, DType::bfloat16, 1);
}

// Stride 0: one scale for all groups, as before per-group scales.
TEST(KbenchGemmGroups, PerTensorScaleSharedByTheGroups) {
  KBENCH_REQUIRE_HOPPER_KERNEL();
  expect_per_tensor_groups_match(device_groups(), 384, 512, DType::bfloat16, 0);
  expect_per_tensor_groups_match(equal_groups(2, 100), 256, 256, DType::float16, 0);
}

// ---- none: bf16 or fp16 operands ---------------------------------------------------------------

// Random A [rows][k] and B [groups][n][k] of `operands` (B's rows of norm ~1, so D ~ N(0, 1)).
void expect_unscaled_groups_match(const Groups& groups, int64_t n, int64_t k, DType operands, DType d_dtype) {
  SCOPED_TRACE(std::string("operands ") + std::string(kbench::dtype_name(operands)));
  kbench::CudaStream stream;
  DeviceBuffer a(static_cast<std::size_t>(groups.rows * k) * 2), b(static_cast<std::size_t>(groups.count * n * k) * 2);
  KBENCH_CUDA_CHECK(kbench::kernels::fill_normal(a.get(), operands, groups.rows * k, 41, 0.0f, 1.0f, stream.get()));
  KBENCH_CUDA_CHECK(kbench::kernels::fill_normal(b.get(), operands, groups.count * n * k, 42, 0.0f,
                                                 1.0f / std::sqrt(static_cast<float>(k)), stream.get()));
  wg::WgmmaGemmParams p;
  p.scaling = wg::GemmScaling::none;
  p.n = n;
  p.k = k;
  p.a = a.get();
  p.b = b.get();
  p.a_dtype = p.b_dtype = operands;
  p.d_dtype = d_dtype;
  expect_groups_match_reference(p, groups, [&](int g, int64_t first_row, kg::ReferenceGemmParams& r) {
    r.a.data = a.as<uint16_t>() + first_row * k;
    r.a.dtype = operands;
    r.b.data = b.as<uint16_t>() + g * n * k;
    r.b.dtype = operands;
  }, stream.get());
}

TEST(KbenchGemmGroups, Fp16Operands) {
  KBENCH_REQUIRE_HOPPER_KERNEL();
  for (const DType d_dtype : {DType::bfloat16, DType::float16}) {
    expect_unscaled_groups_match(device_groups(), 384, 512, DType::float16, d_dtype);
    expect_unscaled_groups_match(equal_groups(3, 1), 256, 64, DType::float16, d_dtype);    // one k-block
    expect_unscaled_groups_match(equal_groups(4, 7), 640, 200, DType::float16, d_dtype);   // a partial k-block
    expect_unscaled_groups_match(equal_groups(3, 100), 512, 1024, DType::float16, d_dtype);
  }
}

// The bf16 instantiations on the same groups, beside their fp16 twins.
TEST(KbenchGemmGroups, Bf16Operands) {
  KBENCH_REQUIRE_HOPPER_KERNEL();
  expect_unscaled_groups_match(device_groups(), 384, 512, DType::bfloat16, DType::bfloat16);
  expect_unscaled_groups_match(equal_groups(4, 7), 640, 200, DType::bfloat16, DType::float16);
}

// ---- weight_fp4: bf16 or fp16 A, block-scaled FP4 B per group ---------------------------------

struct WeightFp4Case {
  Groups groups;
  int64_t n;
  int64_t k;
  DType a_dtype;
  quant::BlockFormat format;
  quant::SfLayout b_layout;
  DType d_dtype;
};

// Random A and, per group, B normals of stddev (g + 1) / sqrt(k) quantized on their own (NVFP4: each
// group its own global scale, so each its own alpha, 1 / global scale, in group_alpha; MXFP4:
// group_alpha null, 1), group g's scales b_sf_group_stride bytes apart. NVFP4's last group has its
// scale bytes replaced by the smallest e4m3 codes (1 .. 15: 2^-9 .. 0.03), so that every e2m1 x
// scale is below 1: fp16 subnormal operands (fp4_expand.hpp), which wgmma must take as they are. The
// reference dequantizes B with the group's global scale.
void expect_weight_fp4_groups_match(const WeightFp4Case& c) {
  const bool nvfp4 = c.format == quant::BlockFormat::nvfp4;
  SCOPED_TRACE(std::string("A ") + std::string(kbench::dtype_name(c.a_dtype)) + (nvfp4 ? ", NVFP4" : ", MXFP4") +
               " B, scale layout " + std::to_string(static_cast<int>(c.b_layout)));
  const Groups& groups = c.groups;
  kbench::CudaStream stream;
  const int64_t block = nvfp4 ? 16 : 32;
  const int64_t group_codes = c.n * c.k / 2, group_scale_bytes = quant::sf_bytes(c.b_layout, c.n, c.k / block);
  DeviceBuffer a(static_cast<std::size_t>(groups.rows * c.k) * 2), b(static_cast<std::size_t>(groups.count * group_codes)),
      b_scales(static_cast<std::size_t>(groups.count * group_scale_bytes)),
      alphas(static_cast<std::size_t>(groups.count) * sizeof(float));
  KBENCH_CUDA_CHECK(kbench::kernels::fill_normal(a.get(), c.a_dtype, groups.rows * c.k, 51, 0.0f, 1.0f, stream.get()));
  std::vector<float> global_scales, group_alpha;
  for (int g = 0; g < groups.count; ++g) {
    const float stddev = static_cast<float>(g + 1) / std::sqrt(static_cast<float>(c.k));
    global_scales.push_back(kbench::testing::quantize_fp4_normals(
        c.n, c.k, c.format, c.b_layout, 60 + static_cast<uint64_t>(g), stddev, b.as<uint8_t>() + g * group_codes,
        b_scales.as<uint8_t>() + g * group_scale_bytes, stream.get()));
    group_alpha.push_back(1.0f / global_scales.back());
  }
  std::vector<uint8_t> smallest_scales(static_cast<std::size_t>(group_scale_bytes));
  for (std::size_t i = 0; i < smallest_scales.size(); ++i) smallest_scales[i] = static_cast<uint8_t>(1 + i % 15);
  if (nvfp4) {
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(b_scales.as<uint8_t>() + (groups.count - 1) * group_scale_bytes,
                                      smallest_scales.data(), smallest_scales.size(), cudaMemcpyHostToDevice,
                                      stream.get()));
  }
  KBENCH_CUDA_CHECK(
      cudaMemcpyAsync(alphas.get(), group_alpha.data(), alphas.bytes(), cudaMemcpyHostToDevice, stream.get()));

  wg::WgmmaGemmParams p;
  p.scaling = wg::GemmScaling::weight_fp4;
  p.n = c.n;
  p.k = c.k;
  p.a = a.get();
  p.a_dtype = c.a_dtype;
  p.b = b.get();
  p.b_dtype = DType::uint8;
  p.d_dtype = c.d_dtype;
  p.fp4_format = c.format;
  p.b_block_scales = b_scales.as<uint8_t>();
  p.b_sf_layout = c.b_layout;
  p.b_sf_group_stride = group_scale_bytes;
  p.group_alpha = nvfp4 ? alphas.as<float>() : nullptr;
  expect_groups_match_reference(p, groups, [&](int g, int64_t first_row, kg::ReferenceGemmParams& r) {
    r.a.data = a.as<uint16_t>() + first_row * c.k;
    r.a.dtype = c.a_dtype;
    r.b.data = b.as<uint8_t>() + g * group_codes;
    r.b.dtype = DType::uint8;
    r.b.fp4_scales = b_scales.as<uint8_t>() + g * group_scale_bytes;
    r.b.fp4_format = c.format;
    r.b.sf_layout = c.b_layout;
    r.b.sf_columns = c.k / block;
    r.b.global_scale = global_scales[static_cast<std::size_t>(g)];
  }, stream.get());
}

TEST(KbenchGemmGroups, WeightFp4OnDeviceGroups) {
  KBENCH_REQUIRE_HOPPER_KERNEL();
  using quant::BlockFormat;
  using quant::SfLayout;
  for (const WeightFp4Case& c : {
           WeightFp4Case{device_groups(), 384, 512, DType::bfloat16, BlockFormat::nvfp4, SfLayout::swizzled_128x4, DType::bfloat16},
           WeightFp4Case{device_groups(), 256, 1024, DType::float16, BlockFormat::nvfp4, SfLayout::linear, DType::float16},
           WeightFp4Case{device_groups(), 256, 512, DType::bfloat16, BlockFormat::mxfp4, SfLayout::swizzled_8x4, DType::bfloat16},
       }) {
    expect_weight_fp4_groups_match(c);
  }
}

TEST(KbenchGemmGroups, WeightFp4OnEqualGroups) {
  KBENCH_REQUIRE_HOPPER_KERNEL();
  using quant::BlockFormat;
  using quant::SfLayout;
  for (const WeightFp4Case& c : {
           WeightFp4Case{equal_groups(3, 1), 256, 256, DType::float16, BlockFormat::nvfp4, SfLayout::swizzled_128x4, DType::bfloat16},
           WeightFp4Case{equal_groups(4, 7), 640, 384, DType::bfloat16, BlockFormat::mxfp4, SfLayout::swizzled_128x4, DType::float16},
           WeightFp4Case{equal_groups(3, 100), 512, 1024, DType::bfloat16, BlockFormat::nvfp4, SfLayout::swizzled_8x4, DType::bfloat16},
           WeightFp4Case{equal_groups(2, 100), 384, 256, DType::float16, BlockFormat::nvfp4, SfLayout::swizzled_8x4, DType::float16},
       }) {
    expect_weight_fp4_groups_match(c);
  }
}

// The swapped FP4 kernel's own edges (every case also runs the tiled plans): groups of more than 16
// rows (several row blocks, the last partial), n ending in half a 256-row weight block, k of one and
// of three 256-deep stages, empty groups first, in the middle and last, and an MoE's many small
// device groups.
TEST(KbenchGemmGroups, WeightFp4Swapped) {
  KBENCH_REQUIRE_HOPPER_KERNEL();
  using quant::BlockFormat;
  using quant::SfLayout;
  const Groups small_groups{12, 80, 0, {{0, 0, 3, 4, 12, 12, 13, 29, 30, 47, 60, 75, 75}, {0, 5, 5, 5, 6, 20, 36, 53, 54, 54, 70, 78, 78}}};
  for (const WeightFp4Case& c : {
           WeightFp4Case{device_groups(), 640, 768, DType::bfloat16, BlockFormat::mxfp4, SfLayout::swizzled_128x4, DType::bfloat16},
           WeightFp4Case{small_groups, 384, 256, DType::bfloat16, BlockFormat::nvfp4, SfLayout::swizzled_128x4, DType::float16},
           WeightFp4Case{small_groups, 256, 768, DType::float16, BlockFormat::nvfp4, SfLayout::swizzled_128x4, DType::bfloat16},
           WeightFp4Case{equal_groups(5, 20), 384, 512, DType::float16, BlockFormat::nvfp4, SfLayout::swizzled_128x4, DType::float16},
           WeightFp4Case{equal_groups(3, 16), 128, 512, DType::bfloat16, BlockFormat::mxfp4, SfLayout::swizzled_128x4, DType::bfloat16},
       }) {
    expect_weight_fp4_groups_match(c);
  }
}

// ---- the GLU epilogue: groupwise FP8, act = glu(up, gate) in 1x128 FP8 blocks -------------------

// The same grouped groupwise GEMM planned twice: writing D (bf16), and with the GLU epilogue. Each
// owned row's act blocks must be the GLU of D's halves quantized by groupwise_fp8.hpp's rules: the
// scale that of the block's amax (a power of two; one step either way where the amax sits on a
// boundary), each code within e4m3's half step (plus half its subnormal step, 2^-10 of the scale) of
// the GLU's range over D's bf16 rounding (the epilogue's fast SiLU, 2 ulp, and the sums' order are far
// below both); rows no group owns keep their poison.
void expect_glu_matches_plain_epilogue(const Groups& groups, int64_t n, int64_t k, kbench::kernels::GatedLinearUnit unit) {
  SCOPED_TRACE(describe(groups) + ", n " + std::to_string(n) + " k " + std::to_string(k) +
               (unit == kbench::kernels::GatedLinearUnit::swiglu ? ", SwiGLU" : ", GeGLU"));
  kbench::CudaStream stream;
  const int64_t k_blocks = k / 128, n_blocks = n / 128, columns = n / 2;
  DeviceBuffer a(static_cast<std::size_t>(groups.rows * k)), b(static_cast<std::size_t>(groups.count * n * k));
  DeviceBuffer a_scale(static_cast<std::size_t>(groups.rows * k_blocks) * sizeof(float));
  DeviceBuffer b_scale(static_cast<std::size_t>(groups.count * n_blocks * k_blocks) * sizeof(float));
  KBENCH_CUDA_CHECK(kbench::kernels::fill_normal(a.get(), DType::fp8_e4m3, groups.rows * k, 51, 0.0f, 1.0f, stream.get()));
  KBENCH_CUDA_CHECK(kbench::kernels::fill_normal(b.get(), DType::fp8_e4m3, groups.count * n * k, 52, 0.0f, 1.0f, stream.get()));
  // Scales near 1 / sqrt(k): act of order 1, far above the 1e-4 amax floor of the 1x128 scales.
  const float unit_scale = 1.0f / std::sqrt(std::sqrt(static_cast<float>(k)));
  KBENCH_CUDA_CHECK(kbench::kernels::fill_uniform(a_scale.get(), DType::float32, groups.rows * k_blocks, 53,
                                                  0.5f * unit_scale, 1.5f * unit_scale, stream.get()));
  KBENCH_CUDA_CHECK(kbench::kernels::fill_uniform(b_scale.get(), DType::float32, groups.count * n_blocks * k_blocks, 54,
                                                  0.5f * unit_scale, 1.5f * unit_scale, stream.get()));
  DeviceBuffer d(static_cast<std::size_t>(groups.rows * n) * 2), codes(static_cast<std::size_t>(groups.rows * columns));
  DeviceBuffer scales(static_cast<std::size_t>(groups.rows * (columns / 128)) * sizeof(float));
  DeviceBuffer offsets(static_cast<std::size_t>(groups.count + 1) * sizeof(int32_t));

  wg::WgmmaGemmParams p;
  p.scaling = wg::GemmScaling::groupwise;
  p.groups = groups.count;
  p.rows = groups.rows;
  p.rows_per_group = groups.rows_per_group;
  p.row_offsets = groups.rows_per_group > 0 ? nullptr : offsets.as<int32_t>();
  p.n = n;
  p.k = k;
  p.a = a.get();
  p.b = b.get();
  p.d = d.get();
  p.d_dtype = DType::bfloat16;
  p.a_scale = a_scale.as<float>();
  p.b_scale = b_scale.as<float>();
  p.a_scale_row_stride = k_blocks;
  p.a_scale_k_stride = 1;
  p.b_scale_group_stride = n_blocks * k_blocks;
  p.b_scale_n_stride = k_blocks;
  p.b_scale_k_stride = 1;
  const wg::WgmmaGemm plain(p);
  p.d = nullptr;
  p.glu = unit;
  p.glu_codes = codes.get();
  p.glu_scales = scales.as<float>();
  const wg::WgmmaGemm fused(p);

  for (const std::vector<int32_t>& bounds : groups.partitions) {
    if (groups.rows_per_group == 0) {
      KBENCH_CUDA_CHECK(cudaMemcpyAsync(offsets.get(), bounds.data(), offsets.bytes(), cudaMemcpyHostToDevice, stream.get()));
    }
    KBENCH_CUDA_CHECK(kbench::kernels::poison(codes.get(), static_cast<int64_t>(codes.bytes()), stream.get()));
    KBENCH_CUDA_CHECK(kbench::kernels::poison(scales.get(), static_cast<int64_t>(scales.bytes()), stream.get()));
    KBENCH_CUDA_CHECK(plain.run(stream.get()));
    KBENCH_CUDA_CHECK(fused.run(stream.get()));
    const std::vector<uint16_t> got_d = to_host<uint16_t>(d.get(), groups.rows * n, stream.get());
    const std::vector<uint8_t> got_codes = to_host<uint8_t>(codes.get(), groups.rows * columns, stream.get());
    const std::vector<float> got_scales = to_host<float>(scales.get(), groups.rows * (columns / 128), stream.get());
    const int64_t owned = bounds.back();
    int bad = 0;
    for (int64_t row = 0; row < groups.rows; ++row) {
      for (int64_t block = 0; block < columns / 128; ++block) {
        const float got_scale = got_scales[static_cast<std::size_t>(row * (columns / 128) + block)];
        if (row >= owned) {
          EXPECT_TRUE(std::isnan(got_scale)) << "row " << row << " belongs to no group";
          continue;
        }
        // D's halves are bf16 (2^-9 relative): act's range over both operands' rounding, which GeGLU's
        // steep tail (gate ~ -3) widens to a few per cent.
        float low[128], high[128];
        float amax = 0.0f;
        for (int c = 0; c < 128; ++c) {
          const int64_t column = block * 128 + c;
          const float up = stored_value(got_d[static_cast<std::size_t>(row * n + column)], DType::bfloat16);
          const float gate = stored_value(got_d[static_cast<std::size_t>(row * n + columns + column)], DType::bfloat16);
          const float exact = kbench::kernels::gated_linear_unit(unit, up, gate);
          low[c] = high[c] = exact;
          for (const float du : {-0x1p-9f, 0x1p-9f}) {
            for (const float dg : {-0x1p-9f, 0x1p-9f}) {
              const float v = kbench::kernels::gated_linear_unit(unit, up * (1.0f + du), gate * (1.0f + dg));
              low[c] = std::min(low[c], v);
              high[c] = std::max(high[c], v);
            }
          }
          amax = std::max(amax, std::fabs(exact));
        }
        const float want_scale = kg::groupwise_scale(amax);
        if (!(got_scale == want_scale || got_scale == 2.0f * want_scale || 2.0f * got_scale == want_scale) && ++bad <= 5) {
          ADD_FAILURE() << "row " << row << " block " << block << ": scale " << got_scale << " against " << want_scale;
        }
        for (int c = 0; c < 128; ++c) {
          const float value =
              quant::e4m3_to_float(got_codes[static_cast<std::size_t>(row * columns + block * 128 + c)]) * got_scale;
          const float slack = 0.07f * std::max(std::fabs(low[c]), std::fabs(high[c])) + 0x1p-10f * got_scale;
          if (!(value >= low[c] - slack && value <= high[c] + slack) && ++bad <= 5) {  // NaN fails
            ADD_FAILURE() << "row " << row << " column " << block * 128 + c << ": " << value << " against "
                          << low[c] << " .. " << high[c];
          }
        }
      }
    }
    EXPECT_EQ(bad, 0);
    const auto first_written = std::find_if(got_codes.begin() + owned * columns, got_codes.end(),
                                            [](uint8_t code) { return code != 0xFF; });
    EXPECT_EQ(first_written, got_codes.end()) << "code of row " << (first_written - got_codes.begin()) / columns
                                              << " written, which no group owns";
  }
}

TEST(KbenchGemmGroups, GluEpilogue) {
  KBENCH_REQUIRE_HOPPER_KERNEL();
  using kbench::kernels::GatedLinearUnit;
  expect_glu_matches_plain_epilogue(device_groups(), 512, 512, GatedLinearUnit::swiglu);
  expect_glu_matches_plain_epilogue(device_groups(), 256, 384, GatedLinearUnit::geglu);
  expect_glu_matches_plain_epilogue(equal_groups(3, 100), 768, 256, GatedLinearUnit::swiglu);
  expect_glu_matches_plain_epilogue(many_device_groups(), 256, 256, GatedLinearUnit::geglu);
  // Clusters of 2 (B's up and gate halves each multicast by one CTA), pairs past a group's end.
  const ScopedEnv cluster("KBENCH_WGMMA_GEMM_CLUSTER", "2");
  expect_glu_matches_plain_epilogue(device_groups(), 512, 512, GatedLinearUnit::swiglu);
  expect_glu_matches_plain_epilogue(equal_groups(3, 100), 768, 256, GatedLinearUnit::geglu);
}

// What the GLU epilogue refuses: other scalings, and n not two halves of whole 128-column blocks.
TEST(WgmmaGemmGlu, Refusals) {
  wg::WgmmaGemmParams p;
  p.scaling = wg::GemmScaling::groupwise;
  p.rows = 64;
  p.rows_per_group = 64;
  p.n = 384;
  p.k = 256;
  p.glu = kbench::kernels::GatedLinearUnit::swiglu;
  EXPECT_TRUE(wg::wgmma_gemm_unsupported(p).has_value());
  p.n = 512;
  EXPECT_FALSE(wg::wgmma_gemm_unsupported(p).has_value());
  p.scaling = wg::GemmScaling::per_tensor;
  EXPECT_TRUE(wg::wgmma_gemm_unsupported(p).has_value());
}

}  // namespace
