// The permutation's gather: a warp per (token, 128-column block), 4 columns per lane (one 8-byte
// load), the block's amax by a warp reduction, then the 4 codes (one 4-byte store) and the scale
// written to each of the token's local rows. The quantization is done once per token, not per pick.
#include <cstdint>

#include "kernels/moe/permute_quantize.hpp"
#include "kernels/moe/warp_block_quantize.cuh"

namespace kbench::kernels::moe {
namespace {

constexpr int kWarpsPerBlock = 4;
static_assert(kPermuteBlock == 32 * kValuesPerLane);
constexpr int kColumnsPerLane = kValuesPerLane;

__global__ void __launch_bounds__(kWarpsPerBlock * 32) permute_quantize_kernel(PermuteQuantizeParams p) {
  const int64_t blocks_per_row = p.hidden_size / kPermuteBlock;
  const int64_t item = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int64_t token = item / blocks_per_row;
  if (token >= p.tokens) return;  // whole warps leave together
  const int64_t block = item % blocks_per_row;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t column = block * kPermuteBlock + lane * kColumnsPerLane;
  const uint2 packed = *reinterpret_cast<const uint2*>(p.hidden + token * p.hidden_size + column);
  const float x[kColumnsPerLane] = {__uint_as_float(packed.x << 16), __uint_as_float(packed.x & 0xffff0000u),
                                    __uint_as_float(packed.y << 16), __uint_as_float(packed.y & 0xffff0000u)};
  const WarpBlockCodes quantized = warp_quantize_block(x);
  for (int j = 0; j < p.top_k; ++j) {
    const int32_t row = p.permuted_rows[token * p.top_k + j];
    if (row < 0) continue;
    *reinterpret_cast<uint32_t*>(p.out + row * p.hidden_size + column) = quantized.codes;
    if (lane == 0) p.out_scale[row * blocks_per_row + block] = quantized.scale;
  }
}

}  // namespace

cudaError_t launch_permute_quantize(const PermuteQuantizeParams& p, cudaStream_t stream) {
  if (p.tokens < 0 || p.top_k < 1 || p.hidden_size <= 0 || p.hidden_size % kPermuteBlock != 0 ||
      (p.tokens > 0 && (!p.hidden || !p.permuted_rows || !p.out || !p.out_scale))) {
    return cudaErrorInvalidValue;
  }
  if (p.tokens == 0) return cudaSuccess;
  const int64_t items = p.tokens * (p.hidden_size / kPermuteBlock);
  permute_quantize_kernel<<<static_cast<unsigned>((items + kWarpsPerBlock - 1) / kWarpsPerBlock),
                            kWarpsPerBlock * 32, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::moe
