// A warp quantizes one 1x128 block to DeepSeek FP8 (groupwise_fp8.hpp's rules), 4 consecutive
// values per lane: the block's amax by a warp reduction, the power-of-two scale, the lane's 4 e4m3
// codes packed little-endian (one 4-byte store). Shared by the permutation's gather and the gated
// activation.
#pragma once

#include <cstdint>

#include "kernels/gemm/groupwise_fp8.hpp"

namespace kbench::kernels::moe {

inline constexpr int kValuesPerLane = 4;

struct WarpBlockCodes {
  uint32_t codes;
  float scale;
};

__device__ __forceinline__ WarpBlockCodes warp_quantize_block(const float (&x)[kValuesPerLane]) {
  float amax = fmaxf(fmaxf(fabsf(x[0]), fabsf(x[1])), fmaxf(fabsf(x[2]), fabsf(x[3])));
  for (int offset = 16; offset > 0; offset >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  WarpBlockCodes out{0u, gemm::groupwise_scale(amax)};
#pragma unroll
  for (int i = 0; i < kValuesPerLane; ++i) {
    out.codes |= static_cast<uint32_t>(gemm::groupwise_quantize(x[i], out.scale)) << (8 * i);
  }
  return out;
}

}  // namespace kbench::kernels::moe
