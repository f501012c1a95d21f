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
// halves the values a lane holds, swapping half of them with the lane `mask` away). `max` is
// fmaxf for floats, or a packed pair maximum (the quantizer reduces its bf16 / fp16 pairs and
// unpacks once a block).
template <int kG, class T, class Max>
__device__ __forceinline__ T reduce_scatter_max(const T (&v)[kG], int lane, Max max) {
  T held[kG];
#pragma unroll
  for (int i = 0; i < kG; ++i) held[i] = v[i];
#pragma unroll
  for (int n = kG; n > 1; n /= 2) {
    const bool upper = (lane & (n / 2)) != 0;  // keeps the upper half of what it holds
#pragma unroll
    for (int i = 0; i < n / 2; ++i) {
      const T send = upper ? held[i] : held[i + n / 2];
      const T keep = upper ? held[i + n / 2] : held[i];
      held[i] = max(keep, __shfl_xor_sync(kFullWarp, send, n / 2));
    }
  }
  return held[0];
}
template <int kG>
__device__ __forceinline__ float reduce_scatter_max(const float (&v)[kG], int lane) {
  return reduce_scatter_max<kG>(v, lane, [](float a, float b) { return fmaxf(a, b); });
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

// e4m3(x / 6) with the IEEE division's result (float_to_e4m3(ieee_div(x, 6))), by Markstein's
// correction: q0 = x * RN(1/6) is within an ulp of x / 6, r = x - 6 q0 is exact, and q0 + r * RN(1/6)
// is the correctly rounded quotient. r is NaN for infinite x, whose q0 is already right, and 0
// where q0 is exact (there q0 keeps -0's sign). Checked for every fp32 x on the GPU.
__device__ __forceinline__ uint8_t e4m3_of_sixth(float x) {
  constexpr float kSixth = 0x1.555556p-3f;  // RN(1/6)
  const float q0 = __fmul_rn(x, kSixth);
  const float r = __fmaf_rn(-6.0f, q0, x);
  const float q = __fmaf_rn(r, kSixth, q0);
  return float_to_e4m3(r < 0.0f || r > 0.0f ? q : q0);
}

// float_to_ue8m0_round_up(ieee_div(a, D)) for D = 6 (MXFP4) or 448 (MXFP8), a >= 0 and not NaN
// (a block maximum), without the division: for a normal quotient, RN(a / D) <= 2^j exactly when
// a <= D 2^j, so the code is a's exponent less log2 of D's power of two, plus one when a's
// mantissa is above D's (D = 1.5 x 4, 1.75 x 256); quotients below 2^-126 give 0 up to
// kLastZero (found by search) and 1 above; infinity gives 254. Checked for every such a on the GPU.
template <int kDivisor>
__device__ __forceinline__ uint32_t ue8m0_of_quotient(float a) {
  static_assert(kDivisor == 6 || kDivisor == 448);
  constexpr uint32_t kMantissa = kDivisor == 6 ? 0x400000u : 0x600000u;
  constexpr uint32_t kPower = kDivisor == 6 ? 2u : 8u;
  constexpr uint32_t kLastZero = kDivisor == 6 ? 0x01400001u : 0x04600001u;  // largest a giving 0
  const uint32_t bits = __float_as_uint(a);
  const uint32_t code = bits > kLastZero ? (bits + (0x7FFFFFu - kMantissa) - (kPower << 23)) >> 23 : 0u;
  return bits == 0x7F800000u ? 254u : code;
}

// quant::block_scale on the device: the same scale byte and factor, with the divisions above.
// NVFP4's factor g / value(SF) is IEEE (the quantizer takes it from a table when g is fixed).
template <BlockFormat kFormat>
__device__ __forceinline__ BlockScale block_scale_of_max(float amax, float global_scale) {
  BlockScale s;
  if constexpr (kFormat == BlockFormat::nvfp4) {
    s.sf = e4m3_of_sixth(global_scale * amax);
    const float sf_value = e4m3_to_float(s.sf);
    s.factor = sf_value == 0.0f ? 0.0f : ieee_div(global_scale, sf_value);
  } else {
    const uint32_t code = ue8m0_of_quotient<kFormat == BlockFormat::mxfp4 ? 6 : 448>(amax);
    s.sf = static_cast<uint8_t>(code);
    // ue8m0_reciprocal(code); an all-zero block's factor is 0.
    const float factor = code == 254u ? __uint_as_float(0x00400000u) : __uint_as_float((254u - code) << 23);
    s.factor = amax == 0.0f ? 0.0f : factor;
  }
  return s;
}

// float_to_e2m1(x[i] * factor) for 8 values, packed. y = x * factor is rounded once in fp32, as the
// rules say; the GPU's multiply returns its canonical NaN (positive) for every NaN result, so
// m = fminf(|y|, 6) clamps the magnitude (NaN -> 6) and the sign is y's. e2m1's grid has the spacing
// 2^(k-1) on binade k of max(m, 1) (k = 0, 1, 2), so one fp32 add of a magic number 2^(22+k) (whose
// ulp is that spacing) rounds m to the grid to nearest even, in the sum's low mantissa bits; the
// magic's own low bits 2k turn that count into the code index (index = count + 2k). Each value's
// index (the sum's low nibble) and sign (y's top nibble) go into two words by one funnel shift
// each, element 0 ending lowest, and one bit select merges them. Equal to float_to_e2m1 for every
// fp32 product (the GPU tests check it).
__device__ __forceinline__ uint32_t e2m1x8_of_products(const float (&x)[8], float factor) {
  float y[8];
  uint32_t index = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    y[i] = __fmul_rn(x[i], factor);
    const float m = fminf(fabsf(y[i]), 6.0f);
    const uint32_t e = max(__float_as_uint(m) >> 23, 127u);                    // 127 + k
    const float magic = __uint_as_float(e * 0x800002u + (22u << 23) - 254u);  // 2^(22+k), low bits 2k
    index = __funnelshift_r(index, __float_as_uint(m + magic), 4);  // low nibble in at the top
  }
  uint32_t sign = 0;
#pragma unroll
  for (int i = 7; i >= 0; --i) sign = __funnelshift_l(__float_as_uint(y[i]), sign, 4);  // top nibble in at the bottom
  return (index & 0x77777777u) | (sign & 0x88888888u);
}

// Codes of 8 values times `factor` (x * factor rounded once in fp32, as the rules say).
template <BlockFormat kFormat>
__device__ __forceinline__ typename Codes8<kFormat>::type quantize8(const float8& values, float factor) {
  if constexpr (kFormat == BlockFormat::mxfp8) {
    return fp8x8<__NV_E4M3>(values.v, factor);
  } else {
    return e2m1x8_of_products(values.v, factor);
  }
}

}  // namespace kbench::kernels::quant
