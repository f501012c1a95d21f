// GPU tests of kbench's block quantization kernels: packed bytes, scale bytes and token scales
// equal to the host reference (routines/quantization/quant_reference) byte for byte, for every
// format, layout, odd sizes, padding, shuffled rows, per-token scales, batches, both input dtypes
// and PDL; every output written twice over different poison (0x00, 0xFF), so an element the kernel
// leaves unwritten cannot match by chance. Then kbench end to end with --refcheck. Each test skips
// itself where no CUDA device is present.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/quantization/quantize.hpp"
#include "routines/quantization/quant_reference.hpp"

namespace {

using kbench::DeviceBuffer;
using kbench::DType;
namespace kk = kbench::kernels;
namespace q = kbench::kernels::quant;
namespace ref = kbench::quant_reference;
using kbench::testing::to_host;

struct Shape {
  q::BlockFormat format = q::BlockFormat::nvfp4;
  int block = 16;
  q::SfLayout layout = q::SfLayout::swizzled_128x4;
  int64_t batches = 1;
  int64_t rows = 1;
  int64_t columns = 16;
  int64_t padded_columns = 0;  // 0: columns
  bool shuffle = false;
  bool per_token = false;
  float global_scale = 1.0f;
  DType in = DType::bfloat16;
  bool pdl = false;

  [[nodiscard]] std::string describe() const {
    std::ostringstream s;
    s << "format " << static_cast<int>(format) << " block " << block << " layout " << static_cast<int>(layout) << " "
      << batches << "x" << rows << "x" << columns << " padded " << padded_columns << (shuffle ? " shuffle" : "")
      << (per_token ? " per_token" : "") << " g " << global_scale << " " << kbench::dtype_name(in) << (pdl ? " pdl" : "");
    return s.str();
  }
};

// Normal data rounded to the input dtype (the floats the reference sees) and its raw bytes, with
// a zero block, a huge value and a row of tiny values (subnormal scales) planted.
struct Input {
  std::vector<float> values;
  std::vector<uint16_t> raw;
};

Input make_input(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const auto n = static_cast<std::size_t>(s.batches * s.rows * s.columns);
  Input in;
  in.values.resize(n);
  in.raw.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    float v = normal(rng);
    if (i < static_cast<std::size_t>(s.block)) v = 0.0f;
    if (i == static_cast<std::size_t>(s.block) && s.columns >= 2 * s.block) v = 3e4f;
    if (s.rows > 1 && i >= static_cast<std::size_t>(s.columns) && i < static_cast<std::size_t>(2 * s.columns)) v *= 1e-6f;
    if (s.in == DType::bfloat16) {
      const __nv_bfloat16 b = __float2bfloat16(v);
      std::memcpy(&in.raw[i], &b, 2);
      in.values[i] = __bfloat162float(b);
    } else {
      const __half h = __float2half(v);
      std::memcpy(&in.raw[i], &h, 2);
      in.values[i] = __half2float(h);
    }
  }
  return in;
}

void expect_kernel_equals_reference(const Shape& s, uint32_t seed) {
  SCOPED_TRACE(s.describe());
  kbench::CudaStream stream;
  const Input input = make_input(s, seed);
  kk::QuantizeParams p;
  p.format = s.format;
  p.block_size = s.block;
  p.layout = s.layout;
  p.batches = s.batches;
  p.rows = s.rows;
  p.columns = s.columns;
  p.padded_columns = s.padded_columns ? s.padded_columns : s.columns;
  p.shuffle_rows = s.shuffle;
  p.global_scale = s.global_scale;
  p.in_dtype = s.in;
  p.enable_pdl = s.pdl;
  const int64_t data_bytes = p.batches * p.rows * p.output_row_bytes();
  const int64_t scale_bytes = p.batches * p.scale_bytes_per_batch();
  DeviceBuffer d_input(input.raw.size() * 2);
  DeviceBuffer d_output(static_cast<std::size_t>(data_bytes));
  DeviceBuffer d_scales(static_cast<std::size_t>(scale_bytes));
  DeviceBuffer d_tokens(s.per_token ? static_cast<std::size_t>(s.rows) * sizeof(float) : 0);
  KBENCH_CUDA_CHECK(cudaMemcpyAsync(d_input.get(), input.raw.data(), input.raw.size() * 2, cudaMemcpyHostToDevice, stream.get()));
  p.input = d_input.get();
  p.output = d_output.as<uint8_t>();
  p.scales = d_scales.as<uint8_t>();
  p.token_scales = s.per_token ? d_tokens.as<float>() : nullptr;
  const ref::Quantized expected = ref::quantize(input.values, p);
  for (int poison : {0x00, 0xFF}) {
    SCOPED_TRACE("poison " + std::to_string(poison));
    KBENCH_CUDA_CHECK(cudaMemsetAsync(d_output.get(), poison, d_output.bytes(), stream.get()));
    KBENCH_CUDA_CHECK(cudaMemsetAsync(d_scales.get(), poison, d_scales.bytes(), stream.get()));
    if (s.per_token) KBENCH_CUDA_CHECK(cudaMemsetAsync(d_tokens.get(), poison, d_tokens.bytes(), stream.get()));
    ASSERT_EQ(kk::launch_quantize(p, stream.get()), cudaSuccess);
    const auto data = to_host<uint8_t>(d_output.get(), data_bytes, stream.get());
    const auto scales = to_host<uint8_t>(d_scales.get(), scale_bytes, stream.get());
    for (std::size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], expected.data[i]) << "packed byte " << i;
    for (std::size_t i = 0; i < scales.size(); ++i) ASSERT_EQ(scales[i], expected.scales[i]) << "scale byte " << i;
    if (s.per_token) {
      const auto tokens = to_host<float>(d_tokens.get(), s.rows, stream.get());
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        ASSERT_EQ(std::memcmp(&tokens[i], &expected.token_scales[i], sizeof(float)), 0) << "token scale " << i;
      }
    }
  }
}

// NVFP4 has a kernel for each source of g: a launch-wide g (a factor table per CTA, filled under
// the first tile's loads, behind a barrier that warps without a tile reach on their own) and a g
// per token (after the row-amax kernel). Each runs every dtype, layout and block size; the small
// shapes leave warps of the last CTA, or of the only one, without a tile.
void expect_nvfp4_equals_reference(bool per_token, uint32_t seed) {
  for (DType in : {DType::bfloat16, DType::float16}) {
    for (q::SfLayout layout : {q::SfLayout::swizzled_128x4, q::SfLayout::swizzled_8x4, q::SfLayout::linear}) {
      for (int block : {16, 32}) {
        for (int64_t rows : {1, 7, 130, 1000}) {
          for (int64_t columns : {64, 2880, 7168}) {
            Shape s;
            s.format = q::BlockFormat::nvfp4;
            s.block = block;
            s.layout = layout;
            s.rows = rows;
            s.columns = columns;
            s.in = in;
            s.per_token = per_token;
            expect_kernel_equals_reference(s, seed++);
          }
        }
      }
    }
  }
}

TEST(QuantizeKernels, Nvfp4EqualsTheReference) {
  KBENCH_REQUIRE_GPU();
  expect_nvfp4_equals_reference(false, 1);
}

TEST(QuantizeKernels, Nvfp4PerTokenEqualsTheReference) {
  KBENCH_REQUIRE_GPU();
  expect_nvfp4_equals_reference(true, 300);
}

// Shapes with more items (padded row, tile) than the grid has warps, so that a warp takes a run of
// several tiles: with 64 columns (one tile a row) every run crosses rows; with 2880 (3 tiles a row)
// runs also stay within a row. The grid holds at most 6 (launch-wide g) or 4 (per-token) waves of
// 32 resident warps an SM (kernels/quantization/quantize_kernel.cuh, plan_launch); the rows follow
// the device's SM count so that warps take runs of 2 tiles or more at 6 waves.
TEST(QuantizeKernels, Nvfp4RunsOfTilesEqualTheReference) {
  KBENCH_REQUIRE_GPU();
  const int64_t warps = int64_t{kbench::testing::device_sm_count()} * 32 * 6;
  uint32_t seed = 600;
  for (bool per_token : {false, true}) {
    for (DType in : {DType::bfloat16, DType::float16}) {
      for (int block : {16, 32}) {
        for (q::SfLayout layout : {q::SfLayout::swizzled_128x4, q::SfLayout::swizzled_8x4, q::SfLayout::linear}) {
          Shape s;
          s.block = block;
          s.layout = layout;
          s.rows = 2 * warps + 77;
          s.columns = 64;
          s.in = in;
          s.per_token = per_token;
          expect_kernel_equals_reference(s, seed++);
        }
      }
    }
    for (int block : {16, 32}) {
      Shape s;  // 37M elements on 132 SMs: bf16 and 128x4 only
      s.block = block;
      s.rows = warps / 2 + 33;  // 3 tiles a row: over 1.5 tiles a warp, runs of 2 (3 at 4 waves)
      s.columns = 2880;
      s.per_token = per_token;
      expect_kernel_equals_reference(s, seed++);
    }
  }
}

TEST(QuantizeKernels, Nvfp4OptionsEqualTheReference) {
  KBENCH_REQUIRE_GPU();
  Shape s;
  s.rows = 256;
  s.columns = 5120;
  s.global_scale = 448.0f * 6.0f / 4.5f;  // a realistic amax-based global scale
  expect_kernel_equals_reference(s, 11);
  s.global_scale = 1.0f;
  s.shuffle = true;
  expect_kernel_equals_reference(s, 12);
  s.shuffle = false;
  s.per_token = true;
  s.rows = 77;
  s.layout = q::SfLayout::linear;
  expect_kernel_equals_reference(s, 13);
  s.pdl = true;
  expect_kernel_equals_reference(s, 17);
  s.per_token = false;
  expect_kernel_equals_reference(s, 14);
  s.rows = 256;  // per-token g with shuffled rows
  s.layout = q::SfLayout::swizzled_128x4;
  s.pdl = false;
  s.shuffle = true;
  s.per_token = true;
  expect_kernel_equals_reference(s, 18);
  // Batched: scales per matrix in 128x4, rows not a multiple of 128.
  Shape b;
  b.batches = 3;
  b.rows = 100;
  b.columns = 2880;
  b.in = DType::float16;
  expect_kernel_equals_reference(b, 15);
  b.block = 32;
  expect_kernel_equals_reference(b, 16);
  b.padded_columns = 3072;  // columns [2880, 3072) quantized as zeros
  expect_kernel_equals_reference(b, 19);
}

TEST(QuantizeKernels, MxFormatsEqualTheReference) {
  KBENCH_REQUIRE_GPU();
  uint32_t seed = 100;
  for (q::BlockFormat format : {q::BlockFormat::mxfp4, q::BlockFormat::mxfp8}) {
    for (DType in : {DType::bfloat16, DType::float16}) {
      for (q::SfLayout layout : {q::SfLayout::swizzled_128x4, q::SfLayout::linear, q::SfLayout::swizzled_8x4}) {
        for (int64_t rows : {1, 33, 129}) {
          for (int64_t columns : {32, 96, 7168}) {
            Shape s;
            s.format = format;
            s.block = 32;
            s.layout = layout;
            s.rows = rows;
            s.columns = columns;
            s.in = in;
            expect_kernel_equals_reference(s, seed++);
          }
        }
      }
    }
  }
  // MXFP8 columns padded to --alignment: padding bytes and scales are zeros.
  Shape s;
  s.format = q::BlockFormat::mxfp8;
  s.block = 32;
  s.rows = 131;
  s.columns = 96;
  s.padded_columns = 256;
  expect_kernel_equals_reference(s, 7);
}

TEST(QuantizeKernels, RejectsWhatTheyDoNotTake) {
  KBENCH_REQUIRE_GPU();
  DeviceBuffer buffer(1 << 16);
  kk::QuantizeParams p;
  p.input = buffer.get();
  p.output = buffer.as<uint8_t>();
  p.scales = buffer.as<uint8_t>();
  p.rows = 64;
  p.columns = p.padded_columns = 48;
  p.block_size = 32;  // 48 is not a multiple of 32
  EXPECT_EQ(kk::launch_quantize(p, nullptr), cudaErrorInvalidValue);
  p.block_size = 16;
  p.shuffle_rows = true;  // 64 rows: not whole 128-row tiles
  EXPECT_EQ(kk::launch_quantize(p, nullptr), cudaErrorInvalidValue);
  p.shuffle_rows = false;
  p.format = q::BlockFormat::mxfp4;  // MX blocks are 32
  EXPECT_EQ(kk::launch_quantize(p, nullptr), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(QuantizeEndToEnd, EveryRoutinePassesTheRefcheck) {
  KBENCH_REQUIRE_GPU();
  const std::string list = kbench::testing::write_testlist(
      "kbench_quant_e2e.txt",
      "--routine mxfp8_quantize --m 1024 --k 4096 --input_dtype bfloat16 --refcheck\n"
      "--routine mxfp8_quantize --m 100 --k 2880 --input_dtype float16 --no_sf_swizzled_layout --alignment 64 --refcheck\n"
      "--routine mxfp4_quantize --m 1000 --k 7168 --sf_layout 8x4 --refcheck\n"
      "--routine nvfp4_quantize --m 1024 --k 4096 --global_scale 1.0 --sf_layout 128x4 --refcheck\n"
      "--routine nvfp4_quantize --m 1024 --k 4096 --do_shuffle --enable_pdl --refcheck\n"
      "--routine nvfp4_quantize --m 77 --k 5120 --sf_vec_size 32 --sf_layout linear --per_token_activation --refcheck\n"
      "--routine nvfp4_batched_quantize --batch_size 4 --m 100 --k 2880 --input_dtype float16 --refcheck\n");
  kbench::testing::expect_testlist_passes(list, "-n 3", 7);
}

}  // namespace
