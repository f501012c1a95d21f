// GPU tests of kbench's RMSNorm kernels (every path: register, vector loop, scalar loop; fused add,
// fp8 outputs, strides, misalignment, in place, PDL) against the fp32/double reference kernel, and
// of the shared tensor utilities (fill_normal, fill_uniform, poison, convert_to_float). Each test
// skips itself where no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/refcheck.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kbench/dtype.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "kernels/norm/rmsnorm.hpp"

namespace {

using kbench::DeviceBuffer;
using kbench::DType;
using kbench::dtype_name;
using kbench::dtype_size;
using kbench::is_fp8;
namespace kk = kbench::kernels;
using kbench::testing::to_host;

// Device buffers reused across the cases of one test (grown on demand) and a non-blocking stream.
struct WorkspaceSlots {
  enum Slot { kInput, kResidual, kWeight, kOutput, kRefOut, kRefResidual, kOutF32, kResidualF32, kSlots };
};
struct Workspace : WorkspaceSlots, kbench::testing::ScratchBuffers<WorkspaceSlots::kSlots> {};

struct Case {
  DType in = DType::bfloat16;
  DType out = DType::bfloat16;
  bool fused = false;
  float weight_offset = 0.0f;
  float out_scale = 1.0f;
  float eps = 1e-6f;
  int64_t rows = 1;
  int64_t hidden = 1;
  int64_t input_stride = 0;  // 0: hidden
  int64_t residual_stride = 0;
  int64_t output_stride = 0;
  int64_t input_offset = 0;  // elements from a 256-byte aligned allocation
  int64_t residual_offset = 0;
  int64_t output_offset = 0;
  bool in_place = false;  // output = input (same stride)
  bool pdl = false;
  uint64_t seed = 1;

  [[nodiscard]] std::string describe() const {
    std::ostringstream s;
    s << dtype_name(in) << "->" << dtype_name(out) << (fused ? " fused" : "") << " rows=" << rows
      << " hidden=" << hidden << " weight_offset=" << weight_offset << " out_scale=" << out_scale;
    if (input_stride || residual_stride || output_stride) {
      s << " strides=" << input_stride << "/" << residual_stride << "/" << output_stride;
    }
    if (input_offset || residual_offset || output_offset) {
      s << " offsets=" << input_offset << "/" << residual_offset << "/" << output_offset;
    }
    if (in_place) s << " in_place";
    if (pdl) s << " pdl";
    return s.str();
  }
};

// The fp8 grid as kbench's refcheck knows it.
float fp8_max(DType t) { return static_cast<float>(kbench::fp8_max_finite(t)); }
double fp8_spacing(DType t, double x) { return kbench::fp8_grid_step(t, x); }

// Runs the fast kernel and the reference on fresh random inputs and compares. `out_host`, when
// given, receives the kernel's output converted to float ([rows][hidden]).
testing::AssertionResult run_case(Workspace& ws, const Case& c, std::vector<float>* out_host = nullptr) {
  cudaStream_t stream = ws.stream();
  const int64_t is = c.input_stride ? c.input_stride : c.hidden;
  const int64_t rs = c.residual_stride ? c.residual_stride : c.hidden;
  const int64_t os = c.in_place ? is : (c.output_stride ? c.output_stride : c.hidden);
  const auto in_size = static_cast<int64_t>(dtype_size(c.in));
  const auto out_size = static_cast<int64_t>(dtype_size(c.out));

  const int64_t in_count = c.input_offset + c.rows * is;
  char* input_base = ws.get(Workspace::kInput, in_count * in_size);
  KBENCH_CUDA_CHECK(kk::fill_normal(input_base, c.in, in_count, c.seed, 0.0f, 1.0f, stream));
  char* input = input_base + c.input_offset * in_size;

  const int64_t res_count = c.residual_offset + c.rows * rs;
  char* residual_base = nullptr;
  char* residual = nullptr;
  if (c.fused) {
    residual_base = ws.get(Workspace::kResidual, res_count * in_size);
    KBENCH_CUDA_CHECK(kk::fill_normal(residual_base, c.in, res_count, c.seed + 1, 0.0f, 1.0f, stream));
    residual = residual_base + c.residual_offset * in_size;
  }

  char* weight = ws.get(Workspace::kWeight, c.hidden * in_size);
  KBENCH_CUDA_CHECK(kk::fill_normal(weight, c.in, c.hidden, c.seed + 2, c.weight_offset != 0.0f ? 0.0f : 1.0f,
                                    0.5f, stream));

  char* output_base = nullptr;
  char* output = nullptr;
  int64_t out_count = 0;
  if (c.in_place) {
    output_base = input_base;
    output = input;
    out_count = in_count;
  } else {
    out_count = c.output_offset + c.rows * os;
    output_base = ws.get(Workspace::kOutput, out_count * out_size);
    KBENCH_CUDA_CHECK(kk::poison(output_base, out_count * out_size, stream));
    output = output_base + c.output_offset * out_size;
  }

  const int64_t n = c.rows * c.hidden;
  auto* ref_out = reinterpret_cast<float*>(ws.get(Workspace::kRefOut, n * 4));
  auto* ref_res = reinterpret_cast<float*>(ws.get(Workspace::kRefResidual, n * 4));
  KBENCH_CUDA_CHECK(kk::poison(ref_out, n * 4, stream));
  KBENCH_CUDA_CHECK(kk::poison(ref_res, n * 4, stream));

  kk::RmsNormParams p;
  p.input = input;
  p.residual = residual;
  p.weight = weight;
  p.output = output;
  p.rows = c.rows;
  p.hidden = c.hidden;
  p.input_stride = is;
  p.residual_stride = c.fused ? rs : 0;
  p.output_stride = os;
  p.eps = c.eps;
  p.weight_offset = c.weight_offset;
  p.out_scale = c.out_scale;
  p.in_dtype = c.in;
  p.out_dtype = c.out;
  p.enable_pdl = c.pdl;

  // The reference first: the kernel may overwrite its inputs (fused add, in place).
  KBENCH_CUDA_CHECK(kk::launch_rmsnorm_reference(p, ref_out, c.fused ? ref_res : nullptr, stream));
  const cudaError_t status = kk::launch_rmsnorm(p, stream);
  if (status != cudaSuccess) return testing::AssertionFailure() << "launch_rmsnorm: " << cudaGetErrorName(status);
  KBENCH_CUDA_CHECK(cudaGetLastError());

  auto* out_f32 = reinterpret_cast<float*>(ws.get(Workspace::kOutF32, out_count * 4));
  KBENCH_CUDA_CHECK(kk::convert_to_float(output_base, c.out, out_count, out_f32, stream));
  float* res_f32 = nullptr;
  if (c.fused) {
    res_f32 = reinterpret_cast<float*>(ws.get(Workspace::kResidualF32, res_count * 4));
    KBENCH_CUDA_CHECK(kk::convert_to_float(residual_base, c.in, res_count, res_f32, stream));
  }
  const std::vector<float> got = to_host<float>(out_f32, out_count, stream);
  const std::vector<float> want = to_host<float>(ref_out, n, stream);
  const std::vector<float> got_res = c.fused ? to_host<float>(res_f32, res_count, stream) : std::vector<float>();
  const std::vector<float> want_res = c.fused ? to_host<float>(ref_res, n, stream) : std::vector<float>();

  int failures = 0;
  std::ostringstream msg;
  auto fail = [&](const char* what, int64_t r, int64_t j, double value, double expected) {
    if (failures < 6) {
      msg << "\n  " << what << " row " << r << " col " << j << ": got " << value << ", want " << expected;
    }
    ++failures;
  };
  if (out_host != nullptr) out_host->assign(static_cast<std::size_t>(n), 0.0f);
  const bool fp8 = is_fp8(c.out);
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t j = 0; j < c.hidden; ++j) {
      const double y = got[static_cast<std::size_t>(c.output_offset + r * os + j)];
      double ref = want[static_cast<std::size_t>(r * c.hidden + j)];
      if (out_host != nullptr) (*out_host)[static_cast<std::size_t>(r * c.hidden + j)] = static_cast<float>(y);
      if (std::isnan(y) || std::isnan(ref)) {
        fail("NaN output", r, j, y, ref);
        continue;
      }
      double tol;
      if (fp8) {
        ref = std::clamp(ref, -static_cast<double>(fp8_max(c.out)), static_cast<double>(fp8_max(c.out)));
        tol = 0.1 + 0.1 * std::fabs(ref) + fp8_spacing(c.out, ref);
      } else {
        tol = 1e-2 + 1e-2 * std::fabs(ref);
      }
      if (!(std::fabs(y - ref) <= tol)) fail("output", r, j, y, ref);
    }
    // Padding between rows must stay untouched (poisoned).
    if (!c.in_place) {
      for (int64_t j = c.hidden; j < os; ++j) {
        const float y = got[static_cast<std::size_t>(c.output_offset + r * os + j)];
        if (!std::isnan(y)) fail("write into row padding", r, j, y, NAN);
      }
    }
    if (c.fused) {
      for (int64_t j = 0; j < c.hidden; ++j) {
        const float v = got_res[static_cast<std::size_t>(c.residual_offset + r * rs + j)];
        const float ref = want_res[static_cast<std::size_t>(r * c.hidden + j)];
        if (!(v == ref)) fail("residual", r, j, v, ref);
      }
    }
  }
  if (failures > 0) return testing::AssertionFailure() << failures << " mismatches in " << c.describe() << msg.str();
  return testing::AssertionSuccess();
}

// ------------------------------------------------------------------------------------------------
// The matrix: {bf16, fp16} x {same, e4m3, e5m2} x fused {off, on}, each over weight_offset {0, 1}
// x hidden sizes x rows.
// ------------------------------------------------------------------------------------------------

struct MatrixParam {
  DType in;
  DType out;
  bool fused;
  [[nodiscard]] std::string name() const {
    return std::string(dtype_name(in)) + "_to_" + std::string(dtype_name(out)) + (fused ? "_fused" : "");
  }
  friend void PrintTo(const MatrixParam& p, std::ostream* os) { *os << p.name(); }
};

class RmsNormMatrix : public testing::TestWithParam<MatrixParam> {};

TEST_P(RmsNormMatrix, MatchesReference) {
  KBENCH_REQUIRE_GPU();
  const auto [in, out, fused] = GetParam();
  Workspace ws;
  uint64_t seed = 100;
  for (float weight_offset : {0.0f, 1.0f}) {
    for (int64_t hidden : {1, 7, 127, 128, 1000, 4096, 8191, 8192, 16384, 40000, 70000}) {
      for (int64_t rows : {1, 3, 129}) {
        Case c;
        c.in = in;
        c.out = out;
        c.fused = fused;
        c.weight_offset = weight_offset;
        c.hidden = hidden;
        c.rows = rows;
        c.seed = seed;
        seed += 3;
        EXPECT_TRUE(run_case(ws, c));
      }
    }
  }
}

std::vector<MatrixParam> matrix_params() {
  std::vector<MatrixParam> params;
  for (DType in : {DType::bfloat16, DType::float16}) {
    for (DType out : {in, DType::fp8_e4m3, DType::fp8_e5m2}) {
      for (bool fused : {false, true}) params.push_back({in, out, fused});
    }
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, RmsNormMatrix, testing::ValuesIn(matrix_params()),
                         [](const testing::TestParamInfo<MatrixParam>& info) { return info.param.name(); });

// Shapes the matrix leaves out: the 8-vectors-per-thread register path (16384 < hidden <= 32768,
// full and partially masked), just past the register cap, partially masked narrow rows, and many
// rows (several waves of blocks).
TEST(RmsNormKernels, OtherShapes) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  const std::vector<std::pair<DType, DType>> dtypes = {
      {DType::bfloat16, DType::bfloat16}, {DType::bfloat16, DType::fp8_e4m3}, {DType::float16, DType::float16}};
  uint64_t seed = 2000;
  for (const auto& [in, out] : dtypes) {
    for (bool fused : {false, true}) {
      for (int64_t hidden : {8, 200, 2056, 20000, 32768, 32776}) {
        for (int64_t rows : {1, 129}) {
          Case c;
          c.in = in;
          c.out = out;
          c.fused = fused;
          c.hidden = hidden;
          c.rows = rows;
          c.seed = seed++;
          EXPECT_TRUE(run_case(ws, c));
        }
      }
      Case many;
      many.in = in;
      many.out = out;
      many.fused = fused;
      many.hidden = 8192;
      many.rows = 2000;
      many.seed = seed++;
      EXPECT_TRUE(run_case(ws, many));
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Layouts: row strides, misaligned pointers, in place.
// ------------------------------------------------------------------------------------------------

TEST(RmsNormKernels, StridedRows) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  for (DType in : {DType::bfloat16, DType::float16}) {
    for (DType out : {in, DType::fp8_e4m3}) {
      for (bool fused : {false, true}) {
        for (int64_t hidden : {128, 4096, 8192, 40000}) {
          // 16-byte aligned strides (vector paths) and odd strides (scalar path).
          for (int64_t pad : {64, 3}) {
            Case c;
            c.in = in;
            c.out = out;
            c.fused = fused;
            c.rows = 37;
            c.hidden = hidden;
            c.input_stride = hidden + pad;
            c.residual_stride = hidden + 2 * pad;
            c.output_stride = hidden + (pad == 3 ? 5 : 16);
            c.seed = 7 + static_cast<uint64_t>(hidden + pad);
            EXPECT_TRUE(run_case(ws, c));
          }
        }
      }
    }
  }
}

TEST(RmsNormKernels, MisalignedPointers) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  for (DType out : {DType::bfloat16, DType::fp8_e5m2}) {
    for (bool fused : {false, true}) {
      for (int64_t hidden : {4096, 40000}) {
        for (int which = 0; which < 3; ++which) {
          Case c;
          c.out = out;
          c.fused = fused;
          c.rows = 17;
          c.hidden = hidden;
          c.input_offset = which == 0 ? 1 : 0;
          c.residual_offset = which == 1 ? 3 : 0;
          c.output_offset = which == 2 ? 1 : 0;
          c.seed = 900 + static_cast<uint64_t>(which);
          EXPECT_TRUE(run_case(ws, c));
        }
      }
    }
  }
}

TEST(RmsNormKernels, InPlace) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  for (DType in : {DType::bfloat16, DType::float16}) {
    for (bool fused : {true, false}) {
      for (int64_t hidden : {128, 4096, 8191, 16384, 32768, 40000}) {
        Case c;
        c.in = in;
        c.out = in;
        c.fused = fused;
        c.in_place = true;
        c.rows = 65;
        c.hidden = hidden;
        c.weight_offset = 1.0f;
        c.seed = 300 + static_cast<uint64_t>(hidden);
        EXPECT_TRUE(run_case(ws, c));
      }
    }
  }
}

// fp8 with out_scale != 1, including scales that saturate.
TEST(RmsNormKernels, Fp8OutScale) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  for (DType in : {DType::bfloat16, DType::float16}) {
    for (DType out : {DType::fp8_e4m3, DType::fp8_e5m2}) {
      const std::vector<float> scales = out == DType::fp8_e4m3 ? std::vector<float>{0.37f, 2.5f, 300.0f}
                                                               : std::vector<float>{0.37f, 2.5f, 30000.0f};
      for (float scale : scales) {
        for (bool fused : {false, true}) {
          for (int64_t hidden : {1000, 4096, 8191, 40000}) {
            Case c;
            c.in = in;
            c.out = out;
            c.fused = fused;
            c.out_scale = scale;
            c.rows = 9;
            c.hidden = hidden;
            c.seed = 500 + static_cast<uint64_t>(hidden);
            EXPECT_TRUE(run_case(ws, c));
          }
        }
      }
    }
  }
}

// PDL gives exactly the result of a plain launch (and matches the reference); the launch follows
// another kernel on the same stream so the dependency is real.
TEST(RmsNormKernels, PdlMatchesPlainLaunch) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  for (bool fused : {false, true}) {
    for (int64_t hidden : {128, 4096, 8191, 8192, 40000}) {
      for (DType out : {DType::bfloat16, DType::fp8_e4m3}) {
        Case c;
        c.out = out;
        c.fused = fused;
        c.rows = 300;
        c.hidden = hidden;
        c.seed = 42 + static_cast<uint64_t>(hidden);
        std::vector<float> plain;
        std::vector<float> pdl;
        ASSERT_TRUE(run_case(ws, c, &plain));
        c.pdl = true;
        ASSERT_TRUE(run_case(ws, c, &pdl));
        ASSERT_EQ(plain.size(), pdl.size());
        EXPECT_EQ(0, std::memcmp(plain.data(), pdl.data(), plain.size() * sizeof(float))) << c.describe();
      }
    }
  }
}

TEST(RmsNormKernels, KernelAvailable) {
  KBENCH_REQUIRE_GPU();
  EXPECT_EQ(cudaSuccess, kk::rmsnorm_kernel_available());
}

TEST(RmsNormKernels, InvalidParameters) {
  KBENCH_REQUIRE_GPU();
  constexpr int64_t kRows = 4;
  constexpr int64_t kHidden = 256;
  DeviceBuffer input(kRows * kHidden * 2);
  DeviceBuffer residual(kRows * kHidden * 2);
  DeviceBuffer weight(kHidden * 2);
  DeviceBuffer output(kRows * kHidden * 2);
  DeviceBuffer ref(kRows * kHidden * 4);
  DeviceBuffer ref_res(kRows * kHidden * 4);

  kk::RmsNormParams good;
  good.input = input.get();
  good.weight = weight.get();
  good.output = output.get();
  good.rows = kRows;
  good.hidden = kHidden;
  good.input_stride = kHidden;
  good.output_stride = kHidden;
  ASSERT_EQ(cudaSuccess, kk::launch_rmsnorm(good, nullptr));
  ASSERT_EQ(cudaSuccess, kk::launch_rmsnorm_reference(good, ref.as<float>(), nullptr, nullptr));
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());

  auto expect_invalid = [&](const char* what, auto mutate) {
    kk::RmsNormParams p = good;
    mutate(p);
    EXPECT_EQ(cudaErrorInvalidValue, kk::launch_rmsnorm(p, nullptr)) << what;
    EXPECT_EQ(cudaErrorInvalidValue, kk::launch_rmsnorm_reference(p, ref.as<float>(), ref_res.as<float>(), nullptr))
        << what;
  };
  expect_invalid("out float32", [](kk::RmsNormParams& p) { p.out_dtype = DType::float32; });
  expect_invalid("out float16 from bfloat16", [](kk::RmsNormParams& p) { p.out_dtype = DType::float16; });
  expect_invalid("in float32", [](kk::RmsNormParams& p) {
    p.in_dtype = DType::float32;
    p.out_dtype = DType::float32;
  });
  expect_invalid("in fp8", [](kk::RmsNormParams& p) {
    p.in_dtype = DType::fp8_e4m3;
    p.out_dtype = DType::fp8_e4m3;
  });
  expect_invalid("hidden 0", [](kk::RmsNormParams& p) { p.hidden = 0; });
  expect_invalid("hidden -1", [](kk::RmsNormParams& p) { p.hidden = -1; });
  expect_invalid("rows -1", [](kk::RmsNormParams& p) { p.rows = -1; });
  expect_invalid("null input", [](kk::RmsNormParams& p) { p.input = nullptr; });
  expect_invalid("null weight", [](kk::RmsNormParams& p) { p.weight = nullptr; });
  expect_invalid("null output", [](kk::RmsNormParams& p) { p.output = nullptr; });
  expect_invalid("input stride < hidden", [](kk::RmsNormParams& p) { p.input_stride = kHidden - 1; });
  expect_invalid("output stride < hidden", [](kk::RmsNormParams& p) { p.output_stride = 0; });
  expect_invalid("residual stride < hidden", [&](kk::RmsNormParams& p) {
    p.residual = residual.get();
    p.residual_stride = kHidden / 2;
  });
  expect_invalid("odd input address", [&](kk::RmsNormParams& p) { p.input = input.as<char>() + 1; });
  expect_invalid("partial overlap of input and output", [&](kk::RmsNormParams& p) {
    p.output = input.as<char>() + 2;
    p.rows = 2;
  });
  expect_invalid("output aliases input with another stride", [&](kk::RmsNormParams& p) {
    p.output = input.get();
    p.rows = 2;
    p.input_stride = kHidden * 2;
  });
  expect_invalid("weight overlaps output", [&](kk::RmsNormParams& p) { p.weight = output.get(); });

  // The reference needs its outputs.
  EXPECT_EQ(cudaErrorInvalidValue, kk::launch_rmsnorm_reference(good, nullptr, nullptr, nullptr));
  kk::RmsNormParams fused = good;
  fused.residual = residual.get();
  fused.residual_stride = kHidden;
  EXPECT_EQ(cudaErrorInvalidValue, kk::launch_rmsnorm_reference(fused, ref.as<float>(), nullptr, nullptr));

  // Zero rows: nothing to do, not an error.
  kk::RmsNormParams empty = good;
  empty.rows = 0;
  EXPECT_EQ(cudaSuccess, kk::launch_rmsnorm(empty, nullptr));
  EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
}

// ------------------------------------------------------------------------------------------------
// Tensor utilities.
// ------------------------------------------------------------------------------------------------

std::vector<float> fill_and_read(DType dtype, int64_t count, uint64_t seed, float mean, float stddev,
                                 int64_t offset_elems = 0) {
  const auto size = static_cast<int64_t>(dtype_size(dtype));
  DeviceBuffer data(static_cast<std::size_t>((count + offset_elems) * size + 16));
  DeviceBuffer f32(static_cast<std::size_t>(std::max<int64_t>(count, 1) * 4));
  char* p = data.as<char>() + offset_elems * size;
  KBENCH_CUDA_CHECK(kk::fill_normal(p, dtype, count, seed, mean, stddev, nullptr));
  KBENCH_CUDA_CHECK(kk::convert_to_float(p, dtype, count, f32.as<float>(), nullptr));
  return to_host<float>(f32.as<float>(), count, nullptr);
}

TEST(TensorFill, NormalStatistics) {
  KBENCH_REQUIRE_GPU();
  constexpr int64_t kCount = 1 << 20;
  const std::vector<float> v = fill_and_read(DType::float32, kCount, 1234, 0.5f, 2.0f);
  double sum = 0.0;
  double sum_sq = 0.0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sum_sq += static_cast<double>(x) * x;
  }
  const double mean = sum / kCount;
  const double stddev = std::sqrt(sum_sq / kCount - mean * mean);
  EXPECT_NEAR(mean, 0.5, 0.01);
  EXPECT_NEAR(stddev, 2.0, 0.01);
}

TEST(TensorFill, DependsOnSeedAndIndexOnly) {
  KBENCH_REQUIRE_GPU();
  const std::vector<float> a = fill_and_read(DType::float32, 1003, 77, 0.0f, 1.0f);
  const std::vector<float> b = fill_and_read(DType::float32, 1000, 77, 0.0f, 1.0f, /*offset_elems=*/1);
  const std::vector<float> c = fill_and_read(DType::float32, 1000, 78, 0.0f, 1.0f);
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), 1000 * sizeof(float)));  // count and alignment don't matter
  int same = 0;
  for (int i = 0; i < 1000; ++i) same += a[static_cast<std::size_t>(i)] == c[static_cast<std::size_t>(i)];
  EXPECT_LT(same, 10);
  // Lower precisions are the fp32 values rounded (fp8: saturated).
  for (DType t : {DType::bfloat16, DType::float16, DType::fp8_e4m3, DType::fp8_e5m2}) {
    const float scale = is_fp8(t) ? 300.0f : 1.0f;  // e4m3 saturates at 448
    const std::vector<float> wide = fill_and_read(DType::float32, 4099, 5, 0.0f, scale);
    const std::vector<float> narrow = fill_and_read(t, 4099, 5, 0.0f, scale);
    int saturated = 0;
    for (std::size_t i = 0; i < wide.size(); ++i) {
      const double x = wide[i];
      const double y = narrow[i];
      ASSERT_TRUE(std::isfinite(y)) << dtype_name(t) << " " << i;
      if (is_fp8(t) && std::fabs(x) > fp8_max(t)) {
        ++saturated;
        EXPECT_EQ(std::copysign(static_cast<double>(fp8_max(t)), x), y) << dtype_name(t) << " " << i;
        continue;
      }
      const double rel = t == DType::bfloat16 ? 0x1p-8 : t == DType::float16 ? 0x1p-11
                         : t == DType::fp8_e4m3 ? 0x1p-3 : 0x1p-2;
      const double abs_tol = is_fp8(t) ? fp8_spacing(t, 0.0) : t == DType::float16 ? 0x1p-25 : 1e-38;
      EXPECT_LE(std::fabs(x - y), rel * std::fabs(x) + abs_tol)
          << dtype_name(t) << " " << i;
    }
    if (t == DType::fp8_e4m3) {
      EXPECT_GT(saturated, 0);
    }
  }
}

// torch.rand's law: every element in [low, high) after rounding to its dtype, the mean and spread of
// a uniform, and the same (seed, index) stream whatever the count.
TEST(TensorFill, UniformStaysInItsHalfOpenRange) {
  KBENCH_REQUIRE_GPU();
  constexpr int64_t kCount = 1 << 20;
  for (DType t : {DType::float32, DType::bfloat16, DType::float16, DType::fp8_e4m3}) {
    const float high = is_fp8(t) ? 10.0f : 1.0f;
    DeviceBuffer data(static_cast<std::size_t>(kCount) * dtype_size(t));
    DeviceBuffer f32(static_cast<std::size_t>(kCount) * 4);
    KBENCH_CUDA_CHECK(kk::fill_uniform(data.get(), t, kCount, 99, 0.0f, high, nullptr));
    KBENCH_CUDA_CHECK(kk::convert_to_float(data.get(), t, kCount, f32.as<float>(), nullptr));
    const std::vector<float> v = to_host<float>(f32.as<float>(), kCount, nullptr);
    double sum = 0.0, sum_sq = 0.0;
    for (const float x : v) {
      ASSERT_GE(x, 0.0f) << dtype_name(t);
      ASSERT_LT(x, high) << dtype_name(t);
      sum += x;
      sum_sq += static_cast<double>(x) * x;
    }
    if (is_fp8(t)) continue;  // e4m3's step of 1 in [8, 16) moves the draws in [9.5, 10) (5%) to 0
    const double mean = sum / kCount;
    EXPECT_NEAR(mean / high, 0.5, 0.01) << dtype_name(t);
    EXPECT_NEAR(std::sqrt(sum_sq / kCount - mean * mean) / high, std::sqrt(1.0 / 12.0), 0.01) << dtype_name(t);
  }
  DeviceBuffer few(100 * 4);
  KBENCH_CUDA_CHECK(kk::fill_uniform(few.get(), DType::float32, 100, 99, 0.0f, 1.0f, nullptr));
  DeviceBuffer many(1000 * 4);
  KBENCH_CUDA_CHECK(kk::fill_uniform(many.get(), DType::float32, 1000, 99, 0.0f, 1.0f, nullptr));
  EXPECT_EQ(to_host<float>(few.as<float>(), 100, nullptr), to_host<float>(many.as<float>(), 100, nullptr));
  EXPECT_EQ(cudaErrorInvalidValue, kk::fill_uniform(few.get(), DType::float32, 100, 99, 1.0f, 1.0f, nullptr));
}

TEST(TensorFill, PoisonIsNanForEveryDtype) {
  KBENCH_REQUIRE_GPU();
  DeviceBuffer data(64 * 4);
  DeviceBuffer f32(64 * 4);
  for (DType t : {DType::bfloat16, DType::float16, DType::float32, DType::fp8_e4m3, DType::fp8_e5m2}) {
    KBENCH_CUDA_CHECK(kk::poison(data.get(), 64 * static_cast<int64_t>(dtype_size(t)), nullptr));
    KBENCH_CUDA_CHECK(kk::convert_to_float(data.get(), t, 64, f32.as<float>(), nullptr));
    for (float x : to_host<float>(f32.as<float>(), 64, nullptr)) EXPECT_TRUE(std::isnan(x)) << dtype_name(t);
  }
}

TEST(TensorFill, ConvertKnownBitPatterns) {
  KBENCH_REQUIRE_GPU();
  struct Pattern {
    DType dtype;
    std::vector<uint8_t> bytes;
    std::vector<float> values;
  };
  const std::vector<Pattern> patterns = {
      {DType::bfloat16, {0x80, 0x3F, 0x00, 0xC0, 0x00, 0x00}, {1.0f, -2.0f, 0.0f}},
      {DType::float16, {0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00}, {1.0f, -2.0f, 0x1p-24f}},
      {DType::fp8_e4m3, {0x38, 0xC0, 0x7E, 0x01}, {1.0f, -2.0f, 448.0f, 0x1p-9f}},
      {DType::fp8_e5m2, {0x3C, 0xC0, 0x7B, 0x01}, {1.0f, -2.0f, 57344.0f, 0x1p-16f}},
  };
  DeviceBuffer data(16);
  DeviceBuffer f32(16 * 4);
  for (const Pattern& p : patterns) {
    KBENCH_CUDA_CHECK(cudaMemcpy(data.get(), p.bytes.data(), p.bytes.size(), cudaMemcpyHostToDevice));
    const auto count = static_cast<int64_t>(p.values.size());
    KBENCH_CUDA_CHECK(kk::convert_to_float(data.get(), p.dtype, count, f32.as<float>(), nullptr));
    const std::vector<float> got = to_host<float>(f32.as<float>(), count, nullptr);
    for (std::size_t i = 0; i < p.values.size(); ++i) EXPECT_EQ(p.values[i], got[i]) << dtype_name(p.dtype) << " " << i;
  }
}

}  // namespace
