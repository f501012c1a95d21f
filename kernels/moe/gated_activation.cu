// The gated activation kernel: a warp per (row, 128-column block), 4 columns per lane (8-byte
// loads of each half), the block's amax by a warp reduction, then the e4m3 codes (4 bytes per
// lane) and the block's scale. The grid covers max_rows; rows past the device-side count return
// at once, so the launch needs no host synchronisation.
#include <cstdint>

#include "kernels/moe/gated_activation.hpp"
#include "kernels/moe/warp_block_quantize.cuh"

namespace kbench::kernels::moe {
namespace {

constexpr int kWarpsPerBlock = 4;
static_assert(kActivationBlock == 32 * kValuesPerLane);
constexpr int kColumnsPerLane = kValuesPerLane;

__device__ __forceinline__ float bf16_to_float(uint32_t bits16) { return __uint_as_float(bits16 << 16); }

__device__ __forceinline__ float activate(GatedActivation activation, float up, float gate) {
  const float f = activation == GatedActivation::swiglu ? gate / (1.0f + expf(-gate))
                                                        : 0.5f * gate * (1.0f + erff(gate * 0.70710678118654752f));
  return f * up;
}

__global__ void __launch_bounds__(kWarpsPerBlock * 32) gated_activation_kernel(GatedActivationParams p) {
  const int64_t blocks_per_row = p.intermediate / kActivationBlock;
  const int64_t item = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int64_t row = item / blocks_per_row;
  if (row >= p.max_rows || row >= *p.row_count) return;  // whole warps leave together
  const int64_t block = item % blocks_per_row;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t column = block * kActivationBlock + lane * kColumnsPerLane;
  const uint16_t* in = p.fc1 + row * 2 * p.intermediate;
  const uint2 up = *reinterpret_cast<const uint2*>(in + column);
  const uint2 gate = *reinterpret_cast<const uint2*>(in + p.intermediate + column);
  const float a[kColumnsPerLane] = {
      activate(p.activation, bf16_to_float(up.x & 0xffffu), bf16_to_float(gate.x & 0xffffu)),
      activate(p.activation, bf16_to_float(up.x >> 16), bf16_to_float(gate.x >> 16)),
      activate(p.activation, bf16_to_float(up.y & 0xffffu), bf16_to_float(gate.y & 0xffffu)),
      activate(p.activation, bf16_to_float(up.y >> 16), bf16_to_float(gate.y >> 16))};
  const WarpBlockCodes quantized = warp_quantize_block(a);
  *reinterpret_cast<uint32_t*>(p.out + row * p.intermediate + column) = quantized.codes;
  if (lane == 0) p.out_scale[row * blocks_per_row + block] = quantized.scale;
}

}  // namespace

cudaError_t launch_gated_activation(const GatedActivationParams& p, cudaStream_t stream) {
  if (p.max_rows < 0 || p.intermediate <= 0 || p.intermediate % kActivationBlock != 0 ||
      (p.max_rows > 0 && (!p.fc1 || !p.row_count || !p.out || !p.out_scale))) {
    return cudaErrorInvalidValue;
  }
  if (p.max_rows == 0) return cudaSuccess;
  const int64_t items = p.max_rows * (p.intermediate / kActivationBlock);
  gated_activation_kernel<<<static_cast<unsigned>((items + kWarpsPerBlock - 1) / kWarpsPerBlock),
                            kWarpsPerBlock * 32, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::moe
