// fp8 packing both ways. fp8x8: 8 floats times a scale as 8 fp8 bytes (element 0 in the lowest byte),
// by the conversion instruction (round to nearest even, saturated to the largest finite value): the
// FP8 RoPE's stores and the MXFP8 quantizer's codes. fp8x4_to_f16: 4 fp8 bytes as fp16 pairs, exact
// for e4m3 and e5m2 (decode's tensor-core kernel, MLA fa3's transposed kernel).
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace kbench::kernels {

template <__nv_fp8_interpretation_t kKind>
__device__ __forceinline__ uint2 fp8x8(const float* y, float scale) {
  uint32_t word[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const uint32_t low = __nv_cvt_float2_to_fp8x2(make_float2(y[4 * i] * scale, y[4 * i + 1] * scale), __NV_SATFINITE, kKind);
    const uint32_t high =
        __nv_cvt_float2_to_fp8x2(make_float2(y[4 * i + 2] * scale, y[4 * i + 3] * scale), __NV_SATFINITE, kKind);
    word[i] = low | (high << 16);
  }
  return make_uint2(word[0], word[1]);
}

// Four fp8 bytes x = [b0 b1 b2 b3] -> lo = f16x2(b0, b1), hi = f16x2(b2, b3) (first in the low half).
template <bool kE4m3>
__device__ __forceinline__ void fp8x4_to_f16(uint32_t x, uint32_t& lo, uint32_t& hi) {
  if constexpr (!kE4m3) {
    // e5m2 is the upper byte of an fp16.
    lo = __byte_perm(x, 0u, 0x1404);
    hi = __byte_perm(x, 0u, 0x3424);
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.rn.f16x2.e4m3x2 %0, l;\n cvt.rn.f16x2.e4m3x2 %1, h;\n}\n"
        : "=r"(lo), "=r"(hi)
        : "r"(x));
#else
    // Each byte into the upper byte of an fp16 half, exponent and mantissa shifted right by one:
    // the fp16 with e4m3's bits, 2^-8 times the value (subnormals included); one multiply by 2^8.
    const uint32_t a = __byte_perm(x, 0u, 0x1404);
    const uint32_t b = __byte_perm(x, 0u, 0x3424);
    const uint32_t ta = (a & 0x80008000u) | ((a >> 1) & 0x3F803F80u);
    const uint32_t tb = (b & 0x80008000u) | ((b >> 1) & 0x3F803F80u);
    const uint32_t k256 = 0x5C005C00u;
    asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(lo) : "r"(ta), "r"(k256));
    asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(hi) : "r"(tb), "r"(k256));
#endif
  }
}

}  // namespace kbench::kernels
