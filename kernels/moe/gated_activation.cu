// The gated activation kernel: a warp per (row, 128-column block), 4 columns per lane (8-byte loads
// of each half). fp8_block: the block's amax by a warp reduction, then the e4m3 codes (4 bytes per
// lane) and the block's scale; fp8_per_tensor: a first pass folds every warp's amax into one float
// (atomicMax on its bits: non-negative floats order as their bits), a second quantizes with the
// scale of it. The grid covers max_rows; rows past the device-side count return at once, so the
// launch needs no host synchronisation.
#include <cstdint>

#include "kernels/moe/gated_activation.hpp"
#include "kernels/moe/warp_block_quantize.cuh"

namespace kbench::kernels::moe {
namespace {

constexpr int kWarpsPerBlock = 4;
static_assert(kActivationBlock == 32 * kValuesPerLane);
constexpr int kColumnsPerLane = kValuesPerLane;

enum class Pass { write, per_tensor_amax };

__device__ __forceinline__ float half_of(uint32_t word, int which, bool fp16) {
  return half_bits_to_float(static_cast<uint16_t>(which ? word >> 16 : word & 0xffffu), fp16);
}

template <Pass kPass>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) gated_activation_kernel(GatedActivationParams p) {
  const int64_t blocks_per_row = (p.intermediate + kActivationBlock - 1) / kActivationBlock;
  const int64_t item = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int64_t row = item / blocks_per_row;
  if (row >= p.max_rows || row >= *p.row_count) return;  // whole warps leave together
  const int64_t block = item % blocks_per_row;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t column = block * kActivationBlock + lane * kColumnsPerLane;
  // A partial last block (16-bit outputs and the per-tensor scale only): its idle lanes count as 0.
  const bool active = column < p.intermediate;
  const bool fp16 = p.fc1_dtype == DType::float16;
  const bool gated = is_gated(p.activation);
  const uint16_t* in = p.fc1 + row * (gated ? 2 * p.intermediate : p.intermediate);
  const uint2 up = active ? *reinterpret_cast<const uint2*>(in + column) : uint2{};
  const uint2 gate = active && gated ? *reinterpret_cast<const uint2*>(in + p.intermediate + column) : uint2{};
  const uint32_t up_words[2] = {up.x, up.y}, gate_words[2] = {gate.x, gate.y};
  const float weight = p.row_weights ? p.row_weights[row] : 1.0f;
  float a[kColumnsPerLane];
#pragma unroll
  for (int i = 0; i < kColumnsPerLane; ++i) {
    const float x0 = half_of(up_words[i / 2], i % 2, fp16), x1 = half_of(gate_words[i / 2], i % 2, fp16);
    a[i] = p.row_weights ? gated_activation_value(p.activation, x0 * weight, x1 * weight)
                         : gated_activation_value(p.activation, x0, x1);
  }

  if constexpr (kPass == Pass::per_tensor_amax) {
    float amax = fmaxf(fmaxf(fabsf(a[0]), fabsf(a[1])), fmaxf(fabsf(a[2]), fabsf(a[3])));
    for (int offset = 16; offset > 0; offset >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    if (lane == 0) atomicMax(reinterpret_cast<unsigned*>(p.amax), __float_as_uint(amax));
    return;
  }
  const int64_t at = row * p.intermediate + column;
  if (!active) return;  // after the warp-wide reductions above
  uint2* const out_words = reinterpret_cast<uint2*>(static_cast<uint16_t*>(p.out) + at);
  if (p.output == ActivationOutput::half) {
    *out_words = pack_half_bits(a, fp16);
    return;
  }
  if (p.output == ActivationOutput::mxfp8) {  // whole 32-blocks: every lane is active
    *out_words = lane_block_operands<quant::BlockFormat::mxfp8>(a, 1.0f, false);
    return;
  }
  if (p.output == ActivationOutput::nvfp4) {  // whole 16-blocks: every lane is active
    const float g = nvfp4_global_scale(*p.amax);
    *out_words = lane_block_operands<quant::BlockFormat::nvfp4>(a, g, fp16);
    if (item == 0) {  // row 0 is in use whenever any row is; FC2 reads none of these otherwise
      if (lane == 0) *p.out_scale = g;
      for (int e = lane; e < p.groups; e += 32) p.group_alpha[e] = nvfp4_alpha(g, p.weight_global_scales[e]);
    }
    return;
  }
  uint32_t codes = 0;
  if (p.output == ActivationOutput::fp8_block) {
    const WarpBlockCodes quantized = warp_quantize_block(a);
    codes = quantized.codes;
    if (lane == 0) p.out_scale[row * blocks_per_row + block] = quantized.scale;
  } else {
    const float scale = gemm::groupwise_scale(*p.amax);
#pragma unroll
    for (int i = 0; i < kColumnsPerLane; ++i) codes |= static_cast<uint32_t>(gemm::groupwise_quantize(a[i], scale)) << (8 * i);
    if (item == 0 && lane == 0) *p.out_scale = scale;
  }
  *reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(p.out) + at) = codes;
}

}  // namespace

cudaError_t launch_gated_activation(const GatedActivationParams& p, cudaStream_t stream) {
  const bool nvfp4 = p.output == ActivationOutput::nvfp4;
  const bool mxfp8 = p.output == ActivationOutput::mxfp8;
  // Both need every row's amax before the first value is written.
  const bool per_tensor = p.output == ActivationOutput::fp8_per_tensor || nvfp4;
  const int64_t whole = p.output == ActivationOutput::fp8_block || nvfp4 || mxfp8 ? kActivationBlock : kColumnsPerLane;
  const bool scale_out = p.output != ActivationOutput::half && !mxfp8;
  if (p.max_rows < 0 || p.intermediate <= 0 || p.intermediate % whole != 0 ||
      (p.fc1_dtype != DType::bfloat16 && p.fc1_dtype != DType::float16) ||
      (mxfp8 && p.fc1_dtype != DType::bfloat16) ||  // MXFP8's range is bf16's
      (p.max_rows > 0 && (!p.fc1 || !p.row_count || !p.out || (scale_out && !p.out_scale) || (per_tensor && !p.amax) ||
                          (nvfp4 && (p.groups < 0 || (p.groups > 0 && (!p.weight_global_scales || !p.group_alpha))))))) {
    return cudaErrorInvalidValue;
  }
  if (p.max_rows == 0) return cudaSuccess;
  const int64_t items = p.max_rows * ((p.intermediate + kActivationBlock - 1) / kActivationBlock);
  const auto blocks = static_cast<unsigned>((items + kWarpsPerBlock - 1) / kWarpsPerBlock);
  if (per_tensor) {
    if (const cudaError_t zeroed = cudaMemsetAsync(p.amax, 0, sizeof(float), stream); zeroed != cudaSuccess) {
      return zeroed;
    }
    gated_activation_kernel<Pass::per_tensor_amax><<<blocks, kWarpsPerBlock * 32, 0, stream>>>(p);
  }
  gated_activation_kernel<Pass::write><<<blocks, kWarpsPerBlock * 32, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::moe
