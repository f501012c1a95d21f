// A warp quantizes one 1x128 block to DeepSeek FP8 (groupwise_fp8.hpp's rules), 4 consecutive
// values per lane: the block's amax by a warp reduction, the power-of-two scale, the lane's 4 e4m3
// codes packed little-endian (one 4-byte store); or its NVFP4 / MXFP8 blocks (block_operand.hpp),
// each held by 4 or 8 neighbouring lanes, as 16-bit operand values. Shared by the permutation's
// gather and the gated activation.
#pragma once

#include <cstdint>

#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/moe/block_operand.hpp"
#include "kernels/moe/half_bits.hpp"

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

// A lane's 4 values as bf16 or fp16 bits (round to nearest even), packed little-endian.
__device__ __forceinline__ uint2 pack_half_bits(const float (&x)[kValuesPerLane], bool fp16) {
  uint32_t words[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    words[i] = static_cast<uint32_t>(float_to_half_bits(x[2 * i], fp16)) |
               static_cast<uint32_t>(float_to_half_bits(x[2 * i + 1], fp16)) << 16;
  }
  return make_uint2(words[0], words[1]);
}

// The lane's 4 values of an NVFP4 (global scale g) or MXFP8 block (g unused: 1), which its
// block_elements / 4 neighbouring lanes hold, as 16-bit operand values: the block's amax over those
// lanes, its scale, each element's value. Every lane of the warp calls it (whole blocks).
template <quant::BlockFormat kFormat>
__device__ __forceinline__ uint2 lane_block_operands(const float (&x)[kValuesPerLane], float global_scale, bool fp16) {
  constexpr int kLanes = quant::block_elements(kFormat) / kValuesPerLane;
  float amax = fmaxf(fmaxf(fabsf(x[0]), fabsf(x[1])), fmaxf(fabsf(x[2]), fabsf(x[3])));
#pragma unroll
  for (int offset = 1; offset < kLanes; offset <<= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  const quant::BlockScale s = quant::block_scale(kFormat, amax, global_scale);
  float values[kValuesPerLane];
#pragma unroll
  for (int i = 0; i < kValuesPerLane; ++i) values[i] = block_operand_value(kFormat, x[i], s);
  return pack_half_bits(values, fp16);
}

}  // namespace kbench::kernels::moe
