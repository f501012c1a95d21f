// The block-scaled formats' rules, shared by kbench's quantization kernels and the host (the CPU
// tests check exactly this code against NVIDIA's host models of the conversion instructions and
// against a plain host reference). Hopper has no FP4 / UE8M0 conversion instructions, so these are
// software conversions, bit-identical to the hardware's cvt.rn.satfinite.e2m1x2.f32,
// cvt.rn.satfinite.e4m3x2.f32 and cvt.rp.satfinite.ue8m0x2.f32:
//   e2m1:  magnitudes {0, 0.5, 1, 1.5, 2, 3, 4, 6}, code = sign << 3 | index; round to nearest
//          even, saturate to +-6; the sign of a zero result kept; NaN -> +6 (0x7).
//   e4m3:  round to nearest even, saturate to +-448 (infinities too); NaN -> 0x7F.
//   ue8m0: 2^(code - 127), rounded toward +inf from a non-negative value; 0 and anything up to
//          2^-127 -> 0; above 2^127 (infinity too) -> 254; NaN -> 255.
// Block rules (a = the block's largest magnitude, g = the global scale):
//   NVFP4 (16 or 32 elements): SF = e4m3(g * a / 6); q = e2m1(x * (g / SF)); SF 0 -> q 0.
//   MXFP4 (32):  SF = ue8m0(a / 6); q = e2m1(x * 2^(127 - SF)) (exact: a power of two).
//   MXFP8 (32):  SF = ue8m0(a / 448); q = e4m3(x * 2^(127 - SF)); a = 0 -> SF 0, q 0.
// Divisions are IEEE (correctly rounded) on host and device alike; no fast-math in these files.
#pragma once

#include <cuda_runtime_api.h>
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kbench::kernels::quant {

#if defined(__CUDACC__)
#define KBENCH_QUANT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define KBENCH_QUANT_HOST_DEVICE inline
#endif

KBENCH_QUANT_HOST_DEVICE uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

KBENCH_QUANT_HOST_DEVICE float bits_float(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

KBENCH_QUANT_HOST_DEVICE float ieee_div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// 4-bit e2m1 code of x, rounded to nearest even, saturating at 6 (NaN: 0x7). Branch-free (the
// kernels spend most of their instructions here): x clamped to [-6, 6] with NaN going to +6 (on the
// device fminf/fmaxf return the operand that is not NaN); from 1 up, e2m1's codes are fp32's
// exponent and top mantissa bit, rounded at bit 22 (a carry into the exponent is the right result)
// and rebiased from 127 to 1 (only the low 3 bits are kept: +4 in the rounding constant stands for
// -252); below 1 the grid is the multiples of 0.5, which adding 2^22 (whose ulp is 0.5) rounds to
// and leaves in the low mantissa bits; the sign is fp32's, moved to bit 3 by the final bit select.
// Equal to the threshold rules (ties at 0.25, 1.25, 2.5, 5 down, at 0.75, 1.75, 3.5 up) for every
// fp32 input: exhaustively on the host when it was written, and on the GPU by the GPU tests.
KBENCH_QUANT_HOST_DEVICE uint8_t float_to_e2m1(float x) {
#if defined(__CUDA_ARCH__)
  const float clamped = fmaxf(fminf(x, 6.0f), -6.0f);
#else
  const float clamped = x != x ? 6.0f : std::fmax(std::fmin(x, 6.0f), -6.0f);  // sNaN too
#endif
  const uint32_t bits = float_bits(clamped);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  const uint32_t normal = (magnitude + (0x1FFFFFu + (4u << 22)) + ((magnitude >> 22) & 1u)) >> 22;
  const uint32_t small = float_bits(bits_float(magnitude) + 0x1p22f);
  const uint32_t index = magnitude < 0x3F800000u ? small : normal;
  return static_cast<uint8_t>((index & 0x7u) | ((bits >> 28) & ~0x7u));
}

KBENCH_QUANT_HOST_DEVICE float e2m1_to_float(uint8_t code) {
  constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float m = kMagnitude[code & 0x7];
  return (code & 0x8) ? -m : m;
}

// e4m3 code of x, rounded to nearest even, saturating at 448 (NaN: 0x7F). Branch-free: from 2^-6
// up, keep the exponent and three mantissa bits, rounded at bit 20 (a carry into the exponent is
// the right result), rebiased from 127 to 7; below 2^-6 the subnormals are the multiples of 2^-9,
// which adding 2^14 (whose ulp is 2^-9) rounds to and leaves in the low mantissa bits (8 x 2^-9
// is 2^-6, whose code 0x08 is the smallest normal's). Equal to the branchy form it replaced for
// every fp32 input (checked exhaustively).
// float_to_e4m3 is this on the host and the conversion instruction on the device (sm_89 and up);
// the GPU tests check the two equal for every fp32 input.
KBENCH_QUANT_HOST_DEVICE uint8_t float_to_e4m3_by_rules(float x) {
  constexpr uint32_t kMaxFinite = 0x7E;  // 448
  const uint32_t bits = float_bits(x);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  const uint32_t normal = ((magnitude + 0x7FFFFu + ((magnitude >> 20) & 1u)) >> 20) - ((127u - 7u) << 3);
  const uint32_t small = float_bits(bits_float(magnitude) + 0x1p14f) - 0x46800000u;
  const uint32_t code = magnitude < 0x3C800000u ? small : (normal < kMaxFinite ? normal : kMaxFinite);
  return static_cast<uint8_t>(magnitude > 0x7F800000u ? 0x7Fu : (code | ((bits >> 24) & 0x80u)));
}

KBENCH_QUANT_HOST_DEVICE uint8_t float_to_e4m3(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
#else
  return float_to_e4m3_by_rules(x);
#endif
}

// e4m3's value (NaN for 0x7F and 0xFF). e4m3_to_float is this on the host and the conversion
// instruction on the device (sm_89 and up), checked equal for every code by the GPU tests.
KBENCH_QUANT_HOST_DEVICE float e4m3_to_float_by_rules(uint8_t code) {
  const uint32_t exponent = (code >> 3) & 0xFu;
  const uint32_t mantissa = code & 0x7u;
  if (exponent == 0xFu && mantissa == 0x7u) return bits_float(0x7FC00000u);
  const float magnitude = exponent == 0 ? static_cast<float>(mantissa) * (1.0f / 512.0f)
                                        : bits_float(((exponent + 120u) << 23) | (mantissa << 20));
  return (code & 0x80) ? -magnitude : magnitude;
}

KBENCH_QUANT_HOST_DEVICE float e4m3_to_float(uint8_t code) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3)));
#else
  return e4m3_to_float_by_rules(code);
#endif
}

// ue8m0 of a non-negative v, rounded up to a power of two.
KBENCH_QUANT_HOST_DEVICE uint8_t float_to_ue8m0_round_up(float v) {
  const uint32_t bits = float_bits(v) & 0x7FFFFFFFu;
  if (bits > 0x7F800000u) return 0xFF;
  const uint32_t exponent = bits >> 23;
  if (exponent == 0) return bits > 0x00400000u ? 1 : 0;  // subnormal: above 2^-127 rounds up to 2^-126
  const uint32_t code = exponent + ((bits & 0x7FFFFFu) != 0);
  return static_cast<uint8_t>(code > 254 ? 254 : code);
}

// 2^(127 - code): the reciprocal of a ue8m0 scale, exact for every code but NaN's.
KBENCH_QUANT_HOST_DEVICE float ue8m0_reciprocal(uint8_t code) {
  // 2^(127 - code) for code 0..254 spans 2^127 .. 2^-127; the last is an fp32 subnormal.
  return code == 254 ? bits_float(0x00400000u) : bits_float((254u - code) << 23);
}

KBENCH_QUANT_HOST_DEVICE float ue8m0_to_float(uint8_t code) {
  if (code == 0xFF) return bits_float(0x7FC00000u);
  return code == 0 ? bits_float(0x00400000u) : bits_float(static_cast<uint32_t>(code) << 23);
}

// ---- Block rules -----------------------------------------------------------------------------

enum class BlockFormat : uint8_t { nvfp4, mxfp4, mxfp8 };

// Elements a scale byte covers: NVFP4's 16, the MX formats' 32.
KBENCH_QUANT_HOST_DEVICE constexpr int block_elements(BlockFormat format) { return format == BlockFormat::nvfp4 ? 16 : 32; }

// The per-block quantities: the scale byte and the factor that maps the block's values onto the
// element format's grid.
struct BlockScale {
  uint8_t sf = 0;
  float factor = 0.0f;
};

KBENCH_QUANT_HOST_DEVICE BlockScale block_scale(BlockFormat format, float amax, float global_scale) {
  BlockScale s;
  switch (format) {
    case BlockFormat::nvfp4: {
      s.sf = float_to_e4m3(ieee_div(global_scale * amax, 6.0f));
      const float sf_value = e4m3_to_float(s.sf);
      s.factor = sf_value == 0.0f ? 0.0f : ieee_div(global_scale, sf_value);
      break;
    }
    case BlockFormat::mxfp4:
    case BlockFormat::mxfp8: {
      if (amax == 0.0f) break;
      s.sf = float_to_ue8m0_round_up(ieee_div(amax, format == BlockFormat::mxfp4 ? 6.0f : 448.0f));
      s.factor = ue8m0_reciprocal(s.sf);
      break;
    }
  }
  return s;
}

// One element's code: 4 bits (e2m1) for the FP4 formats, 8 (e4m3) for MXFP8.
KBENCH_QUANT_HOST_DEVICE uint8_t quantize_element(BlockFormat format, float x, float factor) {
  return format == BlockFormat::mxfp8 ? float_to_e4m3(x * factor) : float_to_e2m1(x * factor);
}

// The value a decoder gives back for `code` under scale byte `sf` (g: NVFP4's global scale).
KBENCH_QUANT_HOST_DEVICE float dequantize_element(BlockFormat format, uint8_t code, uint8_t sf, float global_scale) {
  switch (format) {
    case BlockFormat::nvfp4: return ieee_div(e2m1_to_float(code) * e4m3_to_float(sf), global_scale);
    case BlockFormat::mxfp4: return e2m1_to_float(code) * ue8m0_to_float(sf);
    case BlockFormat::mxfp8: return e4m3_to_float(code) * ue8m0_to_float(sf);
  }
  return 0.0f;
}

// Per-token NVFP4 (--per_token_activation): each row's own two-level range, the convention
// g = 448 * 6 / amax applied per row. The call writes per_token_scale(amax) (the decode side's
// factor) and quantizes with its reciprocal as the row's global scale; an all-zero row gets 0.
KBENCH_QUANT_HOST_DEVICE float per_token_scale(float row_amax) { return ieee_div(row_amax, 448.0f * 6.0f); }
KBENCH_QUANT_HOST_DEVICE float per_token_global_scale(float token_scale) {
  return token_scale == 0.0f ? 0.0f : ieee_div(1.0f, token_scale);
}

// ---- Scale-factor layouts ----------------------------------------------------------------------

enum class SfLayout : uint8_t { linear, swizzled_128x4, swizzled_8x4 };

// Rows and scale columns a layout stores (padding included; padding bytes are written as 0).
KBENCH_QUANT_HOST_DEVICE int64_t sf_padded_rows(SfLayout layout, int64_t rows) {
  switch (layout) {
    case SfLayout::linear: return rows;
    case SfLayout::swizzled_128x4: return (rows + 127) / 128 * 128;
    case SfLayout::swizzled_8x4: return (rows + 7) / 8 * 8;
  }
  return rows;
}

KBENCH_QUANT_HOST_DEVICE int64_t sf_padded_columns(SfLayout layout, int64_t columns) {
  return layout == SfLayout::linear ? columns : (columns + 3) / 4 * 4;
}

KBENCH_QUANT_HOST_DEVICE int64_t sf_bytes(SfLayout layout, int64_t rows, int64_t columns) {
  return sf_padded_rows(layout, rows) * sf_padded_columns(layout, columns);
}

// Byte offset of scale (row m, scale column k) of a matrix with `columns` scale columns: a row part
// plus a column part (kernels compute the row part once per row).
// 128x4: 512-byte tiles of 128 rows x 4 columns, row m at (m % 32) * 16 + ((m % 128) / 32) * 4;
// 8x4: 32-byte tiles of 8 rows x 4 columns; linear: m * columns + k. Index: int64_t, or uint32_t in
// kernels whose scale tensors are below 4 GB.
template <class Index = int64_t>
KBENCH_QUANT_HOST_DEVICE Index sf_row_offset(SfLayout layout, std::type_identity_t<Index> m,
                                             std::type_identity_t<Index> columns) {
  const Index tiles_per_row = (columns + 3) / 4;
  switch (layout) {
    case SfLayout::linear: return m * columns;
    case SfLayout::swizzled_128x4: return (m / 128) * tiles_per_row * 512 + (m % 32) * 16 + ((m % 128) / 32) * 4;
    case SfLayout::swizzled_8x4: return (m / 8) * tiles_per_row * 32 + (m % 8) * 4;
  }
  return 0;
}

// The column part: groups of 4 columns a tile apart (a linear row's "tiles" are 4 bytes).
template <class Index = int64_t>
KBENCH_QUANT_HOST_DEVICE Index sf_column_offset(SfLayout layout, std::type_identity_t<Index> k) {
  const Index tile_bytes = layout == SfLayout::swizzled_128x4 ? 512 : layout == SfLayout::swizzled_8x4 ? 32 : 4;
  return (k / 4) * tile_bytes + k % 4;
}

template <class Index = int64_t>
KBENCH_QUANT_HOST_DEVICE Index sf_offset(SfLayout layout, std::type_identity_t<Index> m, std::type_identity_t<Index> k,
                                         std::type_identity_t<Index> columns) {
  return sf_row_offset<Index>(layout, m, columns) + sf_column_offset<Index>(layout, k);
}

// --do_shuffle (TRT-LLM's weight layout): within each block of 32 rows, row r goes to
// 8 * (r % 4) + r / 4.
KBENCH_QUANT_HOST_DEVICE int64_t shuffled_row(int64_t row) {
  const int64_t r = row % 32;
  return row - r + 8 * (r % 4) + r / 4;
}


}  // namespace kbench::kernels::quant
