// The fused RMSNorm + FP4 kernels: the RMSNorm register path (rmsnorm_registers in
// rmsnorm_kernel.cuh: one pass over HBM, the row in registers) with a block-quantizing epilogue.
// Private to rmsnorm_fp4_launch.cu and the per-(dtype, format) translation units
// rmsnorm_fp4_<in>_<format>.cu; include "kernels/norm/rmsnorm_fp4.hpp" instead.
//
// Thread t of a row holds the row's 8-element vectors t, t + tpr, ...; a scale block is 2 (NVFP4)
// or 4 (MXFP4) consecutive vectors, i.e. the same k of 2 or 4 adjacent lanes (threads_per_row is a
// multiple of 4 whenever the row has 4 vectors or more, and hidden a multiple of the block, so a
// block never straddles k or a row). As in the quantizer (block_lanes.cuh), the maxima of G rounds
// k are reduce-scattered over a block's G lanes so that each lane computes one block's scale and
// writes its scale byte(s), and the factors are all-gathered back (a thread of one vector: a
// butterfly, and every lane computes the scale); each lane then quantizes its own 8 values per
// round and writes 4 bytes of codes (a warp: 128 contiguous bytes).
#pragma once

#include "kernels/norm/rmsnorm_fp4.hpp"
#include "kernels/norm/rmsnorm_kernel.cuh"
#include "kernels/quantization/block_formats.hpp"
#include "kernels/quantization/block_lanes.cuh"

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

// Scale byte (row, k) into the layouts asked for (the launch keeps both scale tensors under 4 GB,
// so offsets are 32-bit).
__device__ __forceinline__ void store_scale(const Fp4Out& q, uint32_t row, uint32_t k, uint8_t sf) {
  const auto columns = static_cast<uint32_t>(q.scale_columns);
  if (q.scales_linear != nullptr) q.scales_linear[row * columns + k] = sf;
  if (q.scales_swizzled != nullptr) {
    q.scales_swizzled[quant::sf_offset<uint32_t>(quant::SfLayout::swizzled_128x4, row, k, columns)] = sf;
  }
}

// The 128x4 layout's padding around scale (row, k), written as 0: the row's last block zeroes the
// padding columns, and the rows of the last 128-row tile zero its padding rows between them (row
// tile + j takes padding rows rows + j, rows + j + live, ...). After the epilogue: zeros need no
// registers of the row.
__device__ __forceinline__ void zero_scale_padding(const Fp4Out& q, uint32_t rows, uint32_t row, uint32_t k) {
  const auto columns = static_cast<uint32_t>(q.scale_columns);
  const auto padded_columns = static_cast<uint32_t>(quant::sf_padded_columns(quant::SfLayout::swizzled_128x4, columns));
  const bool last_block = k == columns - 1;
  auto zero = [&](uint32_t r, uint32_t c) {
    q.scales_swizzled[quant::sf_offset<uint32_t>(quant::SfLayout::swizzled_128x4, r, c, columns)] = 0;
  };
  if (last_block) {
    for (uint32_t c = columns; c < padded_columns; ++c) zero(row, c);
  }
  const uint32_t tile = (rows - 1) / 128 * 128;
  if (row < tile) return;
  const uint32_t live = rows - tile;
  for (uint32_t r = rows + (row - tile); r < tile + 128; r += live) {
    zero(r, k);
    if (last_block) {
      for (uint32_t c = columns; c < padded_columns; ++c) zero(r, c);
    }
  }
}

template <class TIn, quant::BlockFormat kFormat, bool kFused, int kVpt>
__global__ void __launch_bounds__(512, kVpt == 4 ? 2 : 1) rmsnorm_fp4_kernel(const Fp4Args args) {
  constexpr int kGroup = kFormat == quant::BlockFormat::nvfp4 ? 2 : 4;  // vectors per scale block
  // Rounds of the thread's vectors whose blocks share one reduce-scatter: kGroup, so that each lane
  // computes one block's scale; a thread of one vector computes its block's scale on every lane.
  constexpr int kRounds = kVpt >= kGroup ? kGroup : 1;
  static_assert(kVpt % kRounds == 0);
  const Args& a = args.norm;
  const Fp4Out& q = args.q;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
  uint8_t* code_row = q.codes + row * (a.hidden / 2);
  const int tpr = static_cast<int>(blockDim.x);
  const int lane = static_cast<int>(threadIdx.x) % kGroup;  // within its block's lanes (tpr is a multiple of kGroup)
  rmsnorm_registers<TIn, kFused, kVpt>(a, row, [&](const auto& x, const auto& w, const auto& ok, float scale) {
#pragma unroll
    for (int k0 = 0; k0 < kVpt; k0 += kRounds) {
      float y[kRounds][8];
      float amax[kRounds];
#pragma unroll
      for (int r = 0; r < kRounds; ++r) {
        normalize8<TIn>(x[k0 + r], w[k0 + r], scale, 0.0f, y[r]);
        amax[r] = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; ++j) amax[r] = fmaxf(amax[r], fabsf(y[r][j]));
      }
      // Every lane shuffles (masked ones hold zeros; a block is wholly masked or not).
      float block_amax;
      int own = 0;  // the round whose block this lane scales
      if constexpr (kRounds == kGroup) {
        block_amax = quant::reduce_scatter_max<kGroup>(amax, lane);
        own = lane;
      } else {
        block_amax = amax[0];
#pragma unroll
        for (int offset = 1; offset < kGroup; offset *= 2) {
          block_amax = fmaxf(block_amax, __shfl_xor_sync(quant::kFullWarp, block_amax, offset));
        }
      }
      const quant::BlockScale s = quant::block_scale_of_max<kFormat>(block_amax, q.global_scale);
      bool own_ok = false;
#pragma unroll
      for (int r = 0; r < kRounds; ++r) own_ok = r == own ? ok[k0 + r] : own_ok;
      const int own_vector = static_cast<int>(threadIdx.x) - lane + (k0 + own) * tpr;  // the block's first
      if (own_ok && (kRounds == kGroup || lane == 0)) {
        store_scale(q, static_cast<uint32_t>(row), static_cast<uint32_t>(own_vector / kGroup), s.sf);
      }
      float factor[kRounds];
      if constexpr (kRounds == kGroup) {
        quant::all_gather<kGroup>(s.factor, lane, factor);
      } else {
        factor[0] = s.factor;
      }
#pragma unroll
      for (int r = 0; r < kRounds; ++r) {
        if (!ok[k0 + r]) continue;
        quant::float8 values;
#pragma unroll
        for (int j = 0; j < 8; ++j) values.v[j] = y[r][j];
        const int64_t i = static_cast<int64_t>(threadIdx.x) + static_cast<int64_t>(k0 + r) * tpr;
        st_stream4(code_row + i * 4, quant::quantize8<kFormat>(values, factor[r]));
      }
    }
  });
  // Padding exists only past a last column that is not a multiple of 4, or in the last 128-row
  // tile: every other row is done here.
  const bool padding = q.scale_columns % 4 != 0 || row >= (a.rows - 1) / 128 * 128;
  if (q.scales_swizzled != nullptr && row < a.rows && padding) {
    const int nvec = static_cast<int>(a.hidden >> 3);
#pragma unroll
    for (int k = 0; k < kVpt; ++k) {
      const int i = static_cast<int>(threadIdx.x) + k * static_cast<int>(blockDim.x);
      if (i < nvec && i % kGroup == 0) {
        zero_scale_padding(q, static_cast<uint32_t>(a.rows), static_cast<uint32_t>(row), static_cast<uint32_t>(i / kGroup));
      }
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
