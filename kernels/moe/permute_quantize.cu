// The permutation's gather: a warp per (token, 128-column block), 4 columns per lane, converted once
// (fp8_block: the block's amax by a warp reduction, then 4 codes and the scale; fp8_block_copy: the
// codes and the block's given scale; nvfp4_quantize: each
// 16-block's amax over its 4 lanes), then written to each of the token's local rows.
#include <cstdint>

#include "kernels/moe/permute_quantize.hpp"
#include "kernels/moe/warp_block_quantize.cuh"

namespace kbench::kernels::moe {
namespace {

constexpr int kWarpsPerBlock = 4;
static_assert(kPermuteBlock == 32 * kValuesPerLane);
constexpr int kColumnsPerLane = kValuesPerLane;

// The lane's 4 values of a 16-bit row.
__device__ __forceinline__ void load_four(const uint16_t* in, bool fp16, float (&x)[kColumnsPerLane]) {
  const uint2 packed = *reinterpret_cast<const uint2*>(in);
  const uint32_t words[2] = {packed.x, packed.y};
#pragma unroll
  for (int i = 0; i < kColumnsPerLane; ++i) {
    x[i] = half_bits_to_float(static_cast<uint16_t>(i % 2 ? words[i / 2] >> 16 : words[i / 2] & 0xffffu), fp16);
  }
}

__global__ void __launch_bounds__(kWarpsPerBlock * 32) permute_quantize_kernel(PermuteQuantizeParams p) {
  const int64_t blocks_per_row = p.hidden_size / kPermuteBlock;
  const int64_t item = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int64_t token = item / blocks_per_row;
  if (token >= p.tokens) return;  // whole warps leave together
  const int64_t block = item % blocks_per_row;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t column = block * kPermuteBlock + lane * kColumnsPerLane;
  const int64_t element = token * p.hidden_size + column;
  const bool fp16 = p.hidden_dtype == DType::float16;
  const bool block_values = p.format == GatherFormat::nvfp4_dequantize || p.format == GatherFormat::nvfp4_quantize ||
                            p.format == GatherFormat::mxfp8_dequantize;
  const bool wide_out = block_values || (p.format == GatherFormat::copy && dtype_size(p.hidden_dtype) == 2);

  uint2 wide = {};      // 16-bit rows out: the lane's 8 bytes
  uint32_t codes = 0;   // otherwise: the lane's 4 bytes
  float scale = 0.0f;   // fp8_block
  if (p.format == GatherFormat::nvfp4_quantize) {
    float x[kColumnsPerLane];
    load_four(static_cast<const uint16_t*>(p.hidden) + element, fp16, x);
    wide = lane_block_operands<quant::BlockFormat::nvfp4>(x, *p.tensor_scale, p.out_dtype == DType::float16);
  } else if (block_values) {
    float values[kColumnsPerLane];
    if (p.format == GatherFormat::mxfp8_dequantize) {
      // The lane's 4 codes share one 32-block's scale byte.
      const uint32_t four = *reinterpret_cast<const uint32_t*>(static_cast<const uint8_t*>(p.hidden) + element);
      const uint8_t sf = p.hidden_sf[element / kMxBlock];
#pragma unroll
      for (int i = 0; i < kColumnsPerLane; ++i) values[i] = mxfp8_operand_value((four >> (8 * i)) & 0xFFu, sf);
    } else {
      // The lane's 4 codes (2 bytes) share one 16-block's scale byte.
      const uint32_t pairs = *reinterpret_cast<const uint16_t*>(static_cast<const uint8_t*>(p.hidden) + element / 2);
      const uint8_t sf = p.hidden_sf[element / kNvfp4Block];
#pragma unroll
      for (int i = 0; i < kColumnsPerLane; ++i) values[i] = nvfp4_operand_value((pairs >> (4 * i)) & 0xFu, sf);
    }
    wide = pack_half_bits(values, p.out_dtype == DType::float16);
  } else if (wide_out) {
    wide = *reinterpret_cast<const uint2*>(static_cast<const uint16_t*>(p.hidden) + element);
  } else if (p.format == GatherFormat::copy || p.format == GatherFormat::fp8_block_copy) {
    codes = *reinterpret_cast<const uint32_t*>(static_cast<const uint8_t*>(p.hidden) + element);
    if (p.format == GatherFormat::fp8_block_copy) scale = p.hidden_block_scales[token * blocks_per_row + block];
  } else {
    float x[kColumnsPerLane];
    load_four(static_cast<const uint16_t*>(p.hidden) + element, fp16, x);
    if (p.format == GatherFormat::fp8_block) {
      const WarpBlockCodes quantized = warp_quantize_block(x);
      codes = quantized.codes;
      scale = quantized.scale;
    } else {
      const float tensor_scale = *p.tensor_scale;
#pragma unroll
      for (int i = 0; i < kColumnsPerLane; ++i) {
        codes |= static_cast<uint32_t>(per_tensor_quantize(x[i], tensor_scale)) << (8 * i);
      }
    }
  }
  for (int j = 0; j < p.top_k; ++j) {
    const int32_t row = p.permuted_rows[token * p.top_k + j];
    if (row < 0) continue;
    const int64_t at = row * p.hidden_size + column;
    if (wide_out) {
      *reinterpret_cast<uint2*>(static_cast<uint16_t*>(p.out) + at) = wide;
    } else {
      *reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(p.out) + at) = codes;
    }
    if (lane == 0 && (p.format == GatherFormat::fp8_block || p.format == GatherFormat::fp8_block_copy)) {
      p.out_scale[row * blocks_per_row + block] = scale;
    }
    if (lane == 0 && block == 0 && p.row_weights) p.row_weights[row] = p.pick_weights[token * p.top_k + j];
  }
}

bool formats_fit(const PermuteQuantizeParams& p) {
  const bool sixteen_bit = p.hidden_dtype == DType::bfloat16 || p.hidden_dtype == DType::float16;
  const bool sixteen_bit_out = p.out_dtype == DType::bfloat16 || p.out_dtype == DType::float16;
  switch (p.format) {
    case GatherFormat::fp8_block: return p.hidden_dtype == DType::bfloat16 && p.out_scale;
    case GatherFormat::fp8_per_tensor: return sixteen_bit && p.tensor_scale;
    case GatherFormat::copy: return sixteen_bit || dtype_size(p.hidden_dtype) == 1;
    case GatherFormat::fp8_block_copy: return p.hidden_dtype == DType::fp8_e4m3 && p.hidden_block_scales && p.out_scale;
    case GatherFormat::nvfp4_dequantize: return p.hidden_dtype == DType::uint8 && p.hidden_sf && sixteen_bit_out;
    case GatherFormat::nvfp4_quantize: return sixteen_bit && p.tensor_scale && sixteen_bit_out;
    case GatherFormat::mxfp8_dequantize:  // MXFP8's range is bf16's, not fp16's
      return p.hidden_dtype == DType::uint8 && p.hidden_sf && p.out_dtype == DType::bfloat16;
  }
  return false;
}

}  // namespace

cudaError_t launch_permute_quantize(const PermuteQuantizeParams& p, cudaStream_t stream) {
  if (p.tokens < 0 || p.top_k < 1 || p.hidden_size <= 0 || p.hidden_size % kPermuteBlock != 0 ||
      (p.row_weights != nullptr) != (p.pick_weights != nullptr) ||
      (p.tokens > 0 && (!p.hidden || !p.permuted_rows || !p.out || !formats_fit(p)))) {
    return cudaErrorInvalidValue;
  }
  if (p.tokens == 0) return cudaSuccess;
  const int64_t items = p.tokens * (p.hidden_size / kPermuteBlock);
  permute_quantize_kernel<<<static_cast<unsigned>((items + kWarpsPerBlock - 1) / kWarpsPerBlock),
                            kWarpsPerBlock * 32, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::moe
