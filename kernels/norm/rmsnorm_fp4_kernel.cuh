// The fused RMSNorm + FP4 kernels: the RMSNorm register path (rmsnorm_registers in
// rmsnorm_kernel.cuh: one pass over HBM, the row in registers) with a block-quantizing epilogue.
// Private to rmsnorm_fp4_launch.cu and the per-(dtype, format) translation units
// rmsnorm_fp4_<in>_<format>.cu; include "kernels/norm/rmsnorm_fp4.hpp" instead.
//
// Thread t of a row holds the row's 8-element vectors t, t + tpr, ...; a scale block is 2 (NVFP4)
// or 4 (MXFP4) consecutive vectors, i.e. the same k of 2 or 4 adjacent lanes (threads_per_row is a
// multiple of 4 whenever the row has 4 vectors or more, and hidden a multiple of the block, so a
// block never straddles k or a row). The block's amax is two butterfly shuffles away; each lane
// quantizes its own 8 values with the quantizer's functions (block_formats.hpp) and writes 4 bytes
// of codes (a warp: 128 contiguous bytes); the block's first lane writes the scale byte(s).
#pragma once

#include "kernels/norm/rmsnorm_fp4.hpp"
#include "kernels/norm/rmsnorm_kernel.cuh"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::rmsnorm_detail {

struct Fp4Out {
  uint8_t* codes;
  uint8_t* scales_linear;
  uint8_t* scales_swizzled;
  int scale_columns;
  float global_scale;
};

struct Fp4Args {
  Args norm;
  Fp4Out q;
};

#define KBENCH_RMSNORM_FP4_DECLARE(NAME)                                                            \
  [[nodiscard]] cudaError_t launch_fp4_##NAME(const Fp4Args& args, const Plan& plan, bool fused, bool pdl, \
                                              cudaStream_t stream)
KBENCH_RMSNORM_FP4_DECLARE(bf16_nvfp4);
KBENCH_RMSNORM_FP4_DECLARE(bf16_mxfp4);
KBENCH_RMSNORM_FP4_DECLARE(fp16_nvfp4);
KBENCH_RMSNORM_FP4_DECLARE(fp16_mxfp4);
#undef KBENCH_RMSNORM_FP4_DECLARE

#if defined(__CUDACC__)

// Scale byte (row, k) into the layouts asked for.
__device__ __forceinline__ void store_scale(const Fp4Out& q, int64_t row, int k, uint8_t sf) {
  if (q.scales_linear != nullptr) q.scales_linear[row * q.scale_columns + k] = sf;
  if (q.scales_swizzled != nullptr) {
    q.scales_swizzled[quant::sf_offset(quant::SfLayout::swizzled_128x4, row, k, q.scale_columns)] = sf;
  }
}

// The 128x4 layout's padding around scale (row, k), written as 0: the row's last block zeroes the
// padding columns, and the rows of the last 128-row tile zero its padding rows between them (row
// tile + j takes padding rows rows + j, rows + j + live, ...). After the epilogue: zeros need no
// registers of the row.
__device__ __forceinline__ void zero_scale_padding(const Fp4Out& q, int64_t rows, int64_t row, int k) {
  const int columns = q.scale_columns;
  const int padded_columns = static_cast<int>(quant::sf_padded_columns(quant::SfLayout::swizzled_128x4, columns));
  const bool last_block = k == columns - 1;
  auto zero = [&](int64_t r, int c) {
    q.scales_swizzled[quant::sf_offset(quant::SfLayout::swizzled_128x4, r, c, columns)] = 0;
  };
  if (last_block) {
    for (int c = columns; c < padded_columns; ++c) zero(row, c);
  }
  const int64_t tile = (rows - 1) / 128 * 128;
  if (row < tile) return;
  const int64_t live = rows - tile;
  for (int64_t r = rows + (row - tile); r < tile + 128; r += live) {
    zero(r, k);
    if (last_block) {
      for (int c = columns; c < padded_columns; ++c) zero(r, c);
    }
  }
}

template <class TIn, quant::BlockFormat kFormat, bool kFused, int kVpt>
__global__ void __launch_bounds__(512, kVpt == 4 ? 2 : 1) rmsnorm_fp4_kernel(const Fp4Args args) {
  constexpr int kGroup = kFormat == quant::BlockFormat::nvfp4 ? 2 : 4;  // vectors per scale block
  const Args& a = args.norm;
  const Fp4Out& q = args.q;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
  uint8_t* code_row = q.codes + row * (a.hidden / 2);
  rmsnorm_registers<TIn, kFused, kVpt>(a, row, [&](int i, bool ok, const Pack16& x, const Pack16& w, float scale) {
    float y[8];
    normalize8<TIn>(x, w, scale, 0.0f, y);
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) amax = fmaxf(amax, fabsf(y[j]));
    // Every lane shuffles (masked ones hold zeros; a block is wholly masked or not).
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
    if constexpr (kGroup == 4) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
    if (!ok) return;
    const quant::BlockScale s = quant::block_scale(kFormat, amax, q.global_scale);
    uint32_t packed = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint32_t lo = quant::quantize_element(kFormat, y[2 * j], s.factor);
      const uint32_t hi = quant::quantize_element(kFormat, y[2 * j + 1], s.factor);
      packed |= (lo | (hi << 4)) << (8 * j);
    }
    st_stream4(code_row + static_cast<int64_t>(i) * 4, packed);
    if (i % kGroup == 0) store_scale(q, row, i / kGroup, s.sf);
  });
  if (q.scales_swizzled != nullptr && row < a.rows) {
    const int nvec = static_cast<int>(a.hidden >> 3);
#pragma unroll
    for (int k = 0; k < kVpt; ++k) {
      const int i = static_cast<int>(threadIdx.x) + k * static_cast<int>(blockDim.x);
      if (i < nvec && i % kGroup == 0) zero_scale_padding(q, a.rows, row, i / kGroup);
    }
  }
}

template <class TIn, quant::BlockFormat kFormat>
cudaError_t launch_fp4_typed(const Fp4Args& args, const Plan& plan, bool fused, bool pdl, cudaStream_t stream) {
  void (*kernel)(Fp4Args) = nullptr;
  if (plan.path != Path::kRegisters) return cudaErrorInvalidValue;
  switch (plan.vpt) {
    case 1:
      kernel = fused ? rmsnorm_fp4_kernel<TIn, kFormat, true, 1> : rmsnorm_fp4_kernel<TIn, kFormat, false, 1>;
      break;
    case 4:
      kernel = fused ? rmsnorm_fp4_kernel<TIn, kFormat, true, 4> : rmsnorm_fp4_kernel<TIn, kFormat, false, 4>;
      break;
    case 8:
      kernel = fused ? rmsnorm_fp4_kernel<TIn, kFormat, true, 8> : rmsnorm_fp4_kernel<TIn, kFormat, false, 8>;
      break;
    default: return cudaErrorInvalidValue;
  }
  return launch_planned(kernel, plan, pdl, args, stream);
}

#endif  // __CUDACC__

}  // namespace kbench::kernels::rmsnorm_detail
