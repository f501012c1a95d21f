// Device helpers for blocks that span G adjacent lanes (G 1, 2 or 4), each lane holding 8 values
// of a block in each of G rounds: the kernels that quantize from registers (the quantizers, the
// fused RMSNorm + FP4 epilogue) reduce the rounds' block maxima so that each lane computes one
// block's scale, share the factors back, and pack 8 codes at a time.
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/fp8_pack.cuh"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::quant {

inline constexpr unsigned kFullWarp = 0xFFFFFFFFu;

struct float8 {
  float v[8];
};

// Lane l ends with the maximum over its G-lane group of v[l % G] (a reduce-scatter: each step
// halves the values a lane holds, swapping half of them with the lane `mask` away).
template <int kG>
__device__ __forceinline__ float reduce_scatter_max(const float (&v)[kG], int lane) {
  float held[kG];
#pragma unroll
  for (int i = 0; i < kG; ++i) held[i] = v[i];
#pragma unroll
  for (int n = kG; n > 1; n /= 2) {
    const bool upper = (lane & (n / 2)) != 0;  // keeps the upper half of what it holds
#pragma unroll
    for (int i = 0; i < n / 2; ++i) {
      const float send = upper ? held[i] : held[i + n / 2];
      const float keep = upper ? held[i + n / 2] : held[i];
      held[i] = fmaxf(keep, __shfl_xor_sync(kFullWarp, send, n / 2));
    }
  }
  return held[0];
}

// The inverse: out[r] = the value of lane (l - l % G + r), i.e. every round's value of the group.
template <int kG>
__device__ __forceinline__ void all_gather(float mine, int lane, float (&out)[kG]) {
  out[0] = mine;
#pragma unroll
  for (int n = 1; n < kG; n *= 2) {
    const bool upper = (lane & n) != 0;
#pragma unroll
    for (int i = 0; i < n; ++i) {
      const float other = __shfl_xor_sync(kFullWarp, out[i], n);
      const float low = upper ? other : out[i];
      const float high = upper ? out[i] : other;
      out[i] = low;
      out[i + n] = high;
    }
  }
}

// 8 values as 8 e2m1 codes (element 0 in the low nibble) or 8 e4m3 bytes (element 0 lowest).
template <BlockFormat kFormat>
struct Codes8 {
  using type = uint32_t;
};
template <>
struct Codes8<BlockFormat::mxfp8> {
  using type = uint2;
};

// float_to_e2m1(x * factor) in fewer instructions: the GPU's multiply returns its canonical NaN
// (positive) for every NaN result, so one fminf clamps the magnitude (NaN -> 6) and the sign is
// the product's (float_to_e2m1 itself takes any NaN, and clears the sign of a negative one). The
// GPU tests check it against the rules for every fp32 x and several factors.
__device__ __forceinline__ uint32_t e2m1_of_product(float x, float factor) {
  const float y = x * factor;
  const uint32_t magnitude = __float_as_uint(fminf(fabsf(y), 6.0f));
  const uint32_t normal = (magnitude + (0x1FFFFFu + (4u << 22)) + ((magnitude >> 22) & 1u)) >> 22;
  const uint32_t small = __float_as_uint(__uint_as_float(magnitude) + 0x1p22f);
  const uint32_t index = magnitude < 0x3F800000u ? small : normal;
  return (index & 0x7u) | ((__float_as_uint(y) >> 28) & ~0x7u);  // one bit select: bit 3 is the sign
}

// Codes of 8 values times `factor` (x * factor rounded once in fp32, as the rules say).
template <BlockFormat kFormat>
__device__ __forceinline__ typename Codes8<kFormat>::type quantize8(const float8& values, float factor) {
  const float* x = values.v;
  if constexpr (kFormat == BlockFormat::mxfp8) {
    return fp8x8<__NV_E4M3>(x, factor);
  } else {
    uint32_t packed = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) packed |= e2m1_of_product(x[i], factor) << (4 * i);
    return packed;
  }
}

}  // namespace kbench::kernels::quant
