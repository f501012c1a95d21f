// GPU tests of kbench's FP4 GEMM on Hopper (mm_fp4, backend `cuda`: block_fp4 in kernels/gemm/sm90,
// the codes and scales expanded to bf16 in the pipeline). The kernel alone: NVFP4 and MXFP4, A's
// scales in every layout (linear, 8x4, 128x4), odd m (1, 7, 100, 1000), both tile shapes and
// split-K, against the fp32 product of the dequantized operands element by element (a poisoned
// output, so that every element must be written). Then the routine's lines through kbench's
// refcheck (gemm_backend_check.hpp: a second input set, a CUDA-graph replay), the reference's
// sample line among them, and what the kernel refuses. Each test skips itself without a CUDA
// device; off Hopper the backend says why and the lines are not run.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "core/host_tensor.hpp"
#include "gemm/gemm_backend_check.hpp"
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
using kbench::testing::Fp4Operand;
using kbench::testing::GemmLine;
using kbench::testing::quantized;
namespace kg = kbench::kernels::gemm;
namespace wg = kbench::kernels::gemm::sm90;
namespace quant = kbench::kernels::quant;

bool hopper_kernel_here() { return kbench::testing::device_is_sm90() && wg::wgmma_gemm_built_for_sm90a(); }

struct Fp4Case {
  int64_t m, n, k;
  quant::BlockFormat format;
  quant::SfLayout a_layout;
};

// The kernel's D against the reference GEMM of the dequantized operands: within 2 bf16 ulps of the
// element plus 1e-3 of the largest (the kernel's products are exact; only the fp32 sums' order and
// the output's rounding differ).
void expect_kernel_matches_reference(const Fp4Case& c) {
  SCOPED_TRACE("m " + std::to_string(c.m) + " n " + std::to_string(c.n) + " k " + std::to_string(c.k) + " format " +
               std::to_string(static_cast<int>(c.format)) + " A layout " + std::to_string(static_cast<int>(c.a_layout)));
  kbench::CudaStream stream;
  const Fp4Operand a = quantized(c.m, c.k, c.format, c.a_layout, 21, stream.get());
  const Fp4Operand b = quantized(c.n, c.k, c.format, quant::SfLayout::swizzled_128x4, 22, stream.get());
  DeviceBuffer d(static_cast<std::size_t>(c.m * c.n) * 2), expected(static_cast<std::size_t>(c.m * c.n) * sizeof(float));
  KBENCH_CUDA_CHECK(kbench::kernels::poison(d.get(), static_cast<int64_t>(d.bytes()), stream.get()));
  wg::WgmmaGemmParams p;
  p.scaling = wg::GemmScaling::block_fp4;
  p.rows_per_group = p.rows = c.m;
  p.n = c.n;
  p.k = c.k;
  p.a = a.codes.get();
  p.b = b.codes.get();
  p.a_dtype = p.b_dtype = DType::uint8;
  p.d = d.get();
  p.d_dtype = DType::bfloat16;
  p.fp4_format = c.format;
  p.a_block_scales = a.scales.as<uint8_t>();
  p.b_block_scales = b.scales.as<uint8_t>();
  p.a_sf_layout = c.a_layout;
  p.b_sf_layout = quant::SfLayout::swizzled_128x4;
  p.alpha = 1.0f / (a.global_scale * b.global_scale);
  const wg::WgmmaGemm gemm(p);
  KBENCH_CUDA_CHECK(gemm.run(stream.get()));

  kg::ReferenceGemmParams r;
  r.m = c.m;
  r.n = c.n;
  r.k = c.k;
  const int64_t block = c.format == quant::BlockFormat::nvfp4 ? 16 : 32;
  for (auto [operand, source, layout] : {std::tuple{&r.a, &a, c.a_layout}, std::tuple{&r.b, &b, p.b_sf_layout}}) {
    operand->data = source->codes.get();
    operand->dtype = DType::uint8;
    operand->fp4_scales = source->scales.as<uint8_t>();
    operand->fp4_format = c.format;
    operand->sf_layout = layout;
    operand->sf_columns = c.k / block;
    operand->global_scale = source->global_scale;
  }
  r.out_dtype = DType::float32;
  r.out = expected.as<float>();
  KBENCH_CUDA_CHECK(kg::reference_gemm(r, stream.get()));
  const auto count = static_cast<std::size_t>(c.m * c.n);
  const std::vector<float> want = kbench::read_as_floats(expected.get(), DType::float32, count, stream.get());
  const std::vector<float> got = kbench::read_as_floats(d.get(), DType::bfloat16, count, stream.get());
  float largest = 0.0f;
  for (const float v : want) largest = std::max(largest, std::fabs(v));
  ASSERT_GT(largest, 0.0f);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const bool close = std::fabs(got[i] - want[i]) <= std::fabs(want[i]) * 0x1p-7f + 1e-3f * largest;  // NaN fails
    if (!close && ++bad <= 5) ADD_FAILURE() << "element " << i << ": " << got[i] << " against " << want[i];
  }
  EXPECT_EQ(bad, 0u);
}

TEST(KbenchGemmFp4, KernelMatchesTheDequantizedProduct) {
  KBENCH_REQUIRE_GPU();
  if (!hopper_kernel_here()) GTEST_SKIP() << "kbench's GEMM kernel is sm_90a";
  using quant::BlockFormat;
  using quant::SfLayout;
  for (const Fp4Case& c : {
           Fp4Case{1, 128, 128, BlockFormat::nvfp4, SfLayout::swizzled_128x4},
           Fp4Case{7, 384, 512, BlockFormat::nvfp4, SfLayout::swizzled_8x4},
           Fp4Case{100, 640, 1152, BlockFormat::nvfp4, SfLayout::linear},
           Fp4Case{1000, 1536, 1024, BlockFormat::nvfp4, SfLayout::swizzled_128x4},
           Fp4Case{1000, 4096, 512, BlockFormat::nvfp4, SfLayout::linear},  // 128 x 256 tiles, an n-tail tile
           Fp4Case{1, 256, 256, BlockFormat::mxfp4, SfLayout::swizzled_128x4},
           Fp4Case{7, 384, 384, BlockFormat::mxfp4, SfLayout::linear},
           Fp4Case{100, 1024, 1024, BlockFormat::mxfp4, SfLayout::swizzled_8x4},
           Fp4Case{1000, 2304, 2048, BlockFormat::mxfp4, SfLayout::swizzled_128x4},
       }) {
    expect_kernel_matches_reference(c);
  }
}

// Both tile shapes on partial tiles, and split-K forced (decode-sized m).
TEST(KbenchGemmFp4, EveryTileShapeAndSplitK) {
  KBENCH_REQUIRE_GPU();
  if (!hopper_kernel_here()) GTEST_SKIP() << "kbench's GEMM kernel is sm_90a";
  using quant::BlockFormat;
  using quant::SfLayout;
  for (const char* tiles : {"128x256", "64x128"}) {
    SCOPED_TRACE(tiles);
    ASSERT_EQ(setenv("KBENCH_WGMMA_GEMM_TILES", tiles, 1), 0);
    expect_kernel_matches_reference({300, 896, 1024, BlockFormat::nvfp4, SfLayout::swizzled_8x4});
    expect_kernel_matches_reference({129, 640, 384, BlockFormat::mxfp4, SfLayout::linear});
  }
  ASSERT_EQ(unsetenv("KBENCH_WGMMA_GEMM_TILES"), 0);
  ASSERT_EQ(setenv("KBENCH_WGMMA_GEMM_SPLITS", "3", 1), 0);
  expect_kernel_matches_reference({64, 2048, 7168, BlockFormat::nvfp4, SfLayout::swizzled_128x4});
  expect_kernel_matches_reference({7, 1024, 2048, BlockFormat::mxfp4, SfLayout::swizzled_128x4});
  ASSERT_EQ(unsetenv("KBENCH_WGMMA_GEMM_SPLITS"), 0);
}

TEST(KbenchGemmFp4, RoutineLines) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           // The reference's sample line (its backends are Blackwell's: kbench's runs it here).
           GemmLine{"mm_fp4", "--m 512 --n 1024 --k 7168 --out_dtype bfloat16 --use_128x4_sf_layout --use_nvfp4"},
           GemmLine{"mm_fp4", "--m 1 --n 128 --k 128 --use_nvfp4 --use_128x4_sf_layout"},
           GemmLine{"mm_fp4", "--m 7 --n 384 --k 512 --use_nvfp4"},  // A's scales 8x4
           GemmLine{"mm_fp4", "--m 100 --n 640 --k 1152 --use_nvfp4 --out_dtype float16"},
           GemmLine{"mm_fp4", "--m 1000 --n 4096 --k 1024 --use_nvfp4 --use_128x4_sf_layout"},
           GemmLine{"mm_fp4", "--m 7 --n 256 --k 256"},  // MXFP4 (the default), 128x4
           GemmLine{"mm_fp4", "--m 1000 --n 1536 --k 2048 --use_128x4_sf_layout"},
           GemmLine{"mm_fp4", "--m 4 --n 192 --k 256 --use_nvfp4"},  // refused: n not a multiple of 128
           GemmLine{"mm_fp4", "--m 4 --n 256 --k 192"},              // refused: k not a multiple of 128
       }) {
    kbench::testing::expect_gemm_backend_passes("cuda", line);
  }
}

}  // namespace
