// 8 floats times a scale as 8 fp8 bytes (element 0 in the lowest byte), by the conversion
// instruction (round to nearest even, saturated to the largest finite value): the FP8 RoPE's stores
// and the MXFP8 quantizer's codes.
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

}  // namespace kbench::kernels
