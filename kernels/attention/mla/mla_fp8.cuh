// fp8 e4m3 caches (and q) widened to bf16 as kbench's MLA kernels stage them: an e4m3 value is exact
// in bf16, so with mul == 1 the widening is lossless (kpe takes mul = kpe_scale / ckv_scale).
#pragma once

#include <cstdint>

#include "kernels/attention/decode/decode_common.cuh"
#include "kernels/common/mma_sm80.cuh"

namespace kbench::kernels::mla_detail {

// Four e4m3 values (element 0 in the lowest byte) -> four bf16 (two words), times mul.
__device__ __forceinline__ uint2 e4m3x4_to_bf16x4(uint32_t bits, float mul) {
  uint32_t out[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const float2 f = decode_detail::fa2::e4m3x2_to_float2(bits >> (16 * i));
    out[i] = sm80::pack2<false>(f.x * mul, f.y * mul);
  }
  return make_uint2(out[0], out[1]);
}

// Sixteen e4m3 values (16 bytes) -> sixteen bf16: elements 0..7 in lo, 8..15 in hi.
__device__ __forceinline__ void e4m3x16_to_bf16x16(uint4 bits, float mul, uint4& lo, uint4& hi) {
  const uint2 w0 = e4m3x4_to_bf16x4(bits.x, mul), w1 = e4m3x4_to_bf16x4(bits.y, mul);
  const uint2 w2 = e4m3x4_to_bf16x4(bits.z, mul), w3 = e4m3x4_to_bf16x4(bits.w, mul);
  lo = make_uint4(w0.x, w0.y, w1.x, w1.y);
  hi = make_uint4(w2.x, w2.y, w3.x, w3.y);
}

}  // namespace kbench::kernels::mla_detail
