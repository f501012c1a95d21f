// The device forms of the block formats' conversions (kernels/quantization/block_formats.hpp) against
// the rules, for every input: on the device float_to_e4m3 and e4m3_to_float are the conversion
// instructions, float_to_e2m1 clamps with fminf/fmaxf, e2m1x8_of_products (the kernels' form)
// relies on the multiply's canonical NaN, and the kernels' block scales (block_lanes.cuh) divide
// without a division, while the host runs the rules the CPU tests check against NVIDIA's host
// models. All 2^32 fp32 bit patterns (NaNs, infinities, subnormals and every tie included) and all
// 256 e4m3 codes.
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/quantization/block_formats.hpp"
#include "kernels/quantization/block_lanes.cuh"

namespace {

namespace q = kbench::kernels::quant;

// e2m1 by its definition: the nearest of {0, 0.5, 1, 1.5, 2, 3, 4, 6}, ties to the even code (at
// 0.25, 1.25, 2.5 and 5 down, at 0.75, 1.75 and 3.5 up), saturating, sign kept, NaN -> +6.
__device__ uint8_t e2m1_by_thresholds(float x) {
  if (x != x) return 0x7;
  const float a = fabsf(x);
  uint8_t index = 7;
  if (a <= 0.25f) {
    index = 0;
  } else if (a < 0.75f) {
    index = 1;
  } else if (a <= 1.25f) {
    index = 2;
  } else if (a < 1.75f) {
    index = 3;
  } else if (a <= 2.5f) {
    index = 4;
  } else if (a < 3.5f) {
    index = 5;
  } else if (a <= 5.0f) {
    index = 6;
  }
  return static_cast<uint8_t>((signbit(x) ? 0x8 : 0x0) | index);
}

struct Mismatches {
  unsigned long long e2m1;
  unsigned long long e2m1_product;
  unsigned long long e4m3;
  unsigned long long e4m3_pair;
  unsigned long long sixth;
  uint32_t first_e2m1;
  uint32_t first_e4m3;
  uint32_t first_product;
  uint32_t first_sixth;
};

__global__ void compare_every_float(Mismatches* out, float factor) {
  unsigned long long e2m1 = 0;
  unsigned long long product = 0;
  unsigned long long e4m3 = 0;
  unsigned long long pair = 0;
  unsigned long long sixth = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  // Each step takes 8 consecutive bit patterns: e2m1x8_of_products packs 8 values.
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < (uint64_t{1} << 29); i += stride) {
    float x[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) x[j] = __uint_as_float(static_cast<uint32_t>(8 * i + j));
    const uint32_t packed = q::e2m1x8_of_products(x, factor);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const uint32_t bits = static_cast<uint32_t>(8 * i + j);
      if (((packed >> (4 * j)) & 0xFu) != e2m1_by_thresholds(x[j] * factor)) {
        ++product;
        atomicMin(&out->first_product, bits);
      }
      if (q::float_to_e2m1(x[j]) != e2m1_by_thresholds(x[j])) {
        ++e2m1;
        atomicMin(&out->first_e2m1, bits);
      }
      const uint8_t rules = q::float_to_e4m3_by_rules(x[j]);
      if (q::float_to_e4m3(x[j]) != rules) {
        ++e4m3;
        atomicMin(&out->first_e4m3, bits);
      }
      // The packed form the kernels use: x in the low byte, -x in the high.
      const uint32_t two = __nv_cvt_float2_to_fp8x2(make_float2(x[j], -x[j]), __NV_SATFINITE, __NV_E4M3);
      if ((two & 0xFFu) != rules || (two >> 8) != q::float_to_e4m3_by_rules(-x[j])) ++pair;
      if (factor == 1.0f && q::e4m3_of_sixth(x[j]) != q::float_to_e4m3_by_rules(q::ieee_div(x[j], 6.0f))) {
        ++sixth;
        atomicMin(&out->first_sixth, bits);
      }
    }
  }
  if (e2m1 != 0) atomicAdd(&out->e2m1, e2m1);
  if (product != 0) atomicAdd(&out->e2m1_product, product);
  if (e4m3 != 0) atomicAdd(&out->e4m3, e4m3);
  if (pair != 0) atomicAdd(&out->e4m3_pair, pair);
  if (sixth != 0) atomicAdd(&out->sixth, sixth);
}

// The kernels' block scales (scale byte and factor) against quant::block_scale for every block
// maximum a kernel can see: every fp32 from 0 to +infinity (maxima of magnitudes are never negative
// or NaN), for each format (NVFP4 with two global scales).
struct ScaleMismatches {
  unsigned long long count[4];
  uint32_t first[4];
};

__global__ void compare_every_block_max(ScaleMismatches* out) {
  const q::BlockFormat formats[4] = {q::BlockFormat::mxfp4, q::BlockFormat::mxfp8, q::BlockFormat::nvfp4, q::BlockFormat::nvfp4};
  const float global_scales[4] = {1.0f, 1.0f, 1.0f, 448.0f * 6.0f / 4.5f};
  unsigned long long count[4] = {0, 0, 0, 0};
  const uint32_t stride = gridDim.x * blockDim.x;
  for (uint32_t bits = blockIdx.x * blockDim.x + threadIdx.x; bits <= 0x7F800000u; bits += stride) {
    const float amax = __uint_as_float(bits);
#pragma unroll
    for (int f = 0; f < 4; ++f) {
      const q::BlockScale rules = q::block_scale(formats[f], amax, global_scales[f]);
      q::BlockScale kernel;
      switch (formats[f]) {
        case q::BlockFormat::mxfp4: kernel = q::block_scale_of_max<q::BlockFormat::mxfp4>(amax, global_scales[f]); break;
        case q::BlockFormat::mxfp8: kernel = q::block_scale_of_max<q::BlockFormat::mxfp8>(amax, global_scales[f]); break;
        case q::BlockFormat::nvfp4: kernel = q::block_scale_of_max<q::BlockFormat::nvfp4>(amax, global_scales[f]); break;
      }
      if (kernel.sf != rules.sf || __float_as_uint(kernel.factor) != __float_as_uint(rules.factor)) {
        ++count[f];
        atomicMin(&out->first[f], bits);
      }
    }
  }
#pragma unroll
  for (int f = 0; f < 4; ++f) {
    if (count[f] != 0) atomicAdd(&out->count[f], count[f]);
  }
}

__global__ void decode_every_code(float* out) {
  const int code = static_cast<int>(threadIdx.x);
  out[code] = q::e4m3_to_float(static_cast<uint8_t>(code));
}

TEST(QuantConversionsOnDevice, EveryFloatConvertsAsTheRulesSay) {
  KBENCH_REQUIRE_GPU();
  kbench::DeviceBuffer buffer(sizeof(Mismatches));
  // e2m1x8_of_products(x, factor) for factors that keep, scale, overflow and underflow x.
  for (const float factor : {1.0f, 0.3712f, 2.5e38f, 1e-30f}) {
    SCOPED_TRACE(factor);
    const Mismatches init{0, 0, 0, 0, 0, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
    KBENCH_CUDA_CHECK(cudaMemcpy(buffer.get(), &init, sizeof init, cudaMemcpyHostToDevice));
    compare_every_float<<<4 * kbench::testing::device_sm_count(), 256>>>(buffer.as<Mismatches>(), factor);
    KBENCH_CUDA_CHECK(cudaGetLastError());
    Mismatches result{};
    KBENCH_CUDA_CHECK(cudaMemcpy(&result, buffer.get(), sizeof result, cudaMemcpyDeviceToHost));
    EXPECT_EQ(result.e2m1, 0u) << "first mismatching fp32 bits 0x" << std::hex << result.first_e2m1;
    EXPECT_EQ(result.e2m1_product, 0u) << "first mismatching fp32 bits 0x" << std::hex << result.first_product;
    EXPECT_EQ(result.e4m3, 0u) << "first mismatching fp32 bits 0x" << std::hex << result.first_e4m3;
    EXPECT_EQ(result.e4m3_pair, 0u);
    EXPECT_EQ(result.sixth, 0u) << "e4m3_of_sixth: first mismatching fp32 bits 0x" << std::hex << result.first_sixth;
  }
}

TEST(QuantConversionsOnDevice, EveryBlockMaximumScalesAsTheRulesSay) {
  KBENCH_REQUIRE_GPU();
  kbench::DeviceBuffer buffer(sizeof(ScaleMismatches));
  const ScaleMismatches init{{0, 0, 0, 0}, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}};
  KBENCH_CUDA_CHECK(cudaMemcpy(buffer.get(), &init, sizeof init, cudaMemcpyHostToDevice));
  compare_every_block_max<<<4 * kbench::testing::device_sm_count(), 256>>>(buffer.as<ScaleMismatches>());
  KBENCH_CUDA_CHECK(cudaGetLastError());
  ScaleMismatches result{};
  KBENCH_CUDA_CHECK(cudaMemcpy(&result, buffer.get(), sizeof result, cudaMemcpyDeviceToHost));
  const char* names[4] = {"mxfp4", "mxfp8", "nvfp4 g 1", "nvfp4 g 597.3"};
  for (int f = 0; f < 4; ++f) {
    EXPECT_EQ(result.count[f], 0u) << names[f] << ": first mismatching maximum 0x" << std::hex << result.first[f];
  }
}

TEST(QuantConversionsOnDevice, EveryE4m3CodeDecodesAsTheRulesSay) {
  KBENCH_REQUIRE_GPU();
  kbench::DeviceBuffer buffer(256 * sizeof(float));
  decode_every_code<<<1, 256>>>(buffer.as<float>());
  KBENCH_CUDA_CHECK(cudaGetLastError());
  std::vector<float> device(256);
  KBENCH_CUDA_CHECK(cudaMemcpy(device.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost));
  for (int code = 0; code < 256; ++code) {
    const float rules = q::e4m3_to_float_by_rules(static_cast<uint8_t>(code));
    if (std::isnan(rules)) {
      EXPECT_TRUE(std::isnan(device[code])) << "code " << code;
    } else {
      EXPECT_EQ(std::memcmp(&device[code], &rules, sizeof rules), 0) << "code " << code << ": " << device[code] << " vs " << rules;
    }
  }
}

}  // namespace
