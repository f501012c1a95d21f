// The block quantization kernels, templated on the input type and the block format; included by
// one translation unit per input dtype.
//
// A warp quantizes tiles of one row. A tile is 4 rounds of 32 lanes x 8 elements, so every load
// (16 bytes a lane) and every code store (4 or 8 bytes a lane) of a warp is contiguous; a block
// spans G lanes (2 for 16-element blocks, 4 for 32): in round r, lanes [G q, G q + G) hold block
// r * 32 / G + q of the tile. The block maxima of each G rounds are reduce-scattered over the G
// lanes (lane l ends with the maximum of round l % G's block), so each lane computes the scales of
// 4 / G blocks and writes their scale bytes, and the factors are all-gathered back before every lane
// quantizes its values. Four rounds amortize a tile's fixed work (addresses, the scale's IEEE
// divisions) over 32 elements a lane. A warp takes a contiguous run of (batch, row, tile) items (the
// other warps of the SM, 4 CTAs of 256 threads at 64 registers, cover its loads' latency).
// Rows past the data (the layout's padding rows) and scale columns past the data write 0 scale
// bytes; columns in [columns, padded_columns) are quantized as zeros. Per-token NVFP4 first runs a
// row-amax kernel (one block per row) that writes the token scales the main kernel reads.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"
#include "kernels/quantization/block_formats.hpp"
#include "kernels/quantization/block_lanes.cuh"
#include "kernels/quantization/quantize.hpp"

namespace kbench::kernels::quantize_detail {

using quant::BlockFormat;
using quant::float8;
using quant::Codes8;
using quant::quantize8;
using quant::reduce_scatter_max;
using quant::all_gather;

inline constexpr int kThreads = 256;
inline constexpr int kWarps = kThreads / 32;
inline constexpr int kMinCtasPerSm = 4;  // at most 64 registers, no spills

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

// 8 values as floats; bf16 by bit moves (one instruction each).
template <class In>
__device__ __forceinline__ float8 to_floats(const uint4& raw) {
  const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
  float8 out;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (std::is_same_v<In, __nv_bfloat16>) {
      out.v[2 * j] = __uint_as_float(words[j] << 16);
      out.v[2 * j + 1] = __uint_as_float(words[j] & 0xFFFF0000u);
    } else {
      const float2 pair = __half22float2(*reinterpret_cast<const __half2*>(&words[j]));
      out.v[2 * j] = pair.x;
      out.v[2 * j + 1] = pair.y;
    }
  }
  return out;
}

inline constexpr int kTileRounds = 4;

template <int kBlock>
struct TileShape {
  static constexpr int kLanesPerBlock = kBlock / 8;  // G: one 16-byte vector of 8 elements a lane
  static constexpr int kRounds = kTileRounds;
  static constexpr int kBlocks = kRounds * 32 / kLanesPerBlock;
  static constexpr int kVectors = kRounds * 32;  // 8-element vectors per tile
};

// The largest magnitude of 8 values, by packed pair maxima (exact: a maximum is one of the values;
// NaNs are passed over, as fmaxf does).
__device__ __forceinline__ float vector_amax(const uint4& raw, __nv_bfloat16) {
  const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
  const __nv_bfloat162 m = __hmax2(__hmax2(__habs2(pairs[0]), __habs2(pairs[1])), __hmax2(__habs2(pairs[2]), __habs2(pairs[3])));
  return fmaxf(fmaxf(0.0f, __low2float(m)), __high2float(m));
}
__device__ __forceinline__ float vector_amax(const uint4& raw, __half) {
  const auto* pairs = reinterpret_cast<const __half2*>(&raw);
  const __half2 m = __hmax2(__hmax2(__habs2(pairs[0]), __habs2(pairs[1])), __hmax2(__habs2(pairs[2]), __habs2(pairs[3])));
  return fmaxf(fmaxf(0.0f, __low2float(m)), __high2float(m));
}

// One item's raw input: a 16-byte vector a lane per round.
template <int kBlock>
struct RawTile {
  uint4 v[TileShape<kBlock>::kRounds];
};

// The items: (batch, row of the padded rows, tile of the row), rows of a batch and tiles of a row
// consecutive. A warp walks a contiguous run of them, so it divides once and then counts.
struct ItemCursor {
  int64_t batch;
  int row;
  int tile;
  __device__ __forceinline__ void advance(int tiles, int padded_rows) {
    if (++tile < tiles) return;
    tile = 0;
    if (++row < padded_rows) return;
    row = 0;
    ++batch;
  }
};

// A tile's loads: one 64-bit address a tile, then immediate offsets (rows past the data and
// vectors past `columns` load zeros).
template <class In, int kBlock>
__device__ __forceinline__ RawTile<kBlock> load_tile(const QuantizeParams& p, const ItemCursor& at, int lane) {
  using Shape = TileShape<kBlock>;
  const int row_vectors = static_cast<int>(p.columns / 8);
  const int vectors = at.row < p.rows ? row_vectors : 0;  // data vectors in this row
  const int first = at.tile * Shape::kVectors + lane;
  const uint4* src =
      reinterpret_cast<const uint4*>(p.input) + (at.batch * p.rows + at.row) * static_cast<int64_t>(row_vectors) + first;
  RawTile<kBlock> raw;
#pragma unroll
  for (int r = 0; r < Shape::kRounds; ++r) {
    raw.v[r] = first + r * 32 < vectors ? __ldg(src + r * 32) : make_uint4(0u, 0u, 0u, 0u);
  }
  return raw;
}

// NVFP4's factors g / value(scale byte), one per e4m3 code, for a launch whose g is the same for
// every row: computed once per CTA (one IEEE division a thread) instead of once per block.
struct FactorTable {
  float value[256];
};

__device__ __forceinline__ void fill_factor_table(FactorTable& table, float global_scale) {
  for (int code = static_cast<int>(threadIdx.x); code < 256; code += blockDim.x) {
    const float sf_value = quant::e4m3_to_float(static_cast<uint8_t>(code));
    table.value[code] = sf_value == 0.0f ? 0.0f : quant::ieee_div(global_scale, sf_value);
  }
  __syncthreads();
}

// quant::block_scale, NVFP4's factor from the table where there is one (nullptr: per-token g).
template <BlockFormat kFormat>
__device__ __forceinline__ quant::BlockScale block_scale(float amax, float global_scale, const FactorTable* factors) {
  if constexpr (kFormat == BlockFormat::nvfp4) {
    if (factors != nullptr) {
      quant::BlockScale s;
      s.sf = quant::float_to_e4m3(quant::ieee_div(global_scale * amax, 6.0f));
      s.factor = factors->value[s.sf];
      return s;
    }
  }
  return quant::block_scale(kFormat, amax, global_scale);
}

template <class In, BlockFormat kFormat, int kBlock>
__device__ __forceinline__ void quantize_tile(const QuantizeParams& p, const ItemCursor& at, const RawTile<kBlock>& raw,
                                              int lane, const FactorTable* factors) {
  using Shape = TileShape<kBlock>;
  constexpr int kG = Shape::kLanesPerBlock;
  const uint32_t scale_columns = static_cast<uint32_t>(p.scale_columns());
  const uint32_t padded_scale_columns = static_cast<uint32_t>(quant::sf_padded_columns(p.layout, scale_columns));
  const bool data_row = at.row < p.rows;
  const uint32_t out_row = p.shuffle_rows ? static_cast<uint32_t>(quant::shuffled_row(at.row)) : static_cast<uint32_t>(at.row);
  const float global_scale = p.token_scales != nullptr && data_row
                                 ? quant::per_token_global_scale(p.token_scales[at.row])
                                 : p.global_scale;
  uint8_t* scales = p.scales + at.batch * p.scale_bytes_per_batch() + quant::sf_row_offset<uint32_t>(p.layout, out_row, scale_columns);
  float factor[Shape::kRounds];
#pragma unroll
  for (int r0 = 0; r0 < Shape::kRounds; r0 += kG) {
    float amax[kG];
#pragma unroll
    for (int r = 0; r < kG; ++r) amax[r] = vector_amax(raw.v[r0 + r], In{});
    // This lane's block: round r0 + lane % G, group lane / G.
    const quant::BlockScale scale = block_scale<kFormat>(reduce_scatter_max<kG>(amax, lane), global_scale, factors);
    const uint32_t block = static_cast<uint32_t>(at.tile * Shape::kBlocks + (r0 + lane % kG) * (32 / kG) + lane / kG);
    if (block < padded_scale_columns) {
      scales[quant::sf_column_offset<uint32_t>(p.layout, block)] = data_row && block < scale_columns ? scale.sf : 0;
    }
    float gathered[kG];
    all_gather<kG>(scale.factor, lane, gathered);
#pragma unroll
    for (int r = 0; r < kG; ++r) factor[r0 + r] = gathered[r];
  }
  if (!data_row) return;
  using Codes = typename Codes8<kFormat>::type;
  const int out_vectors = static_cast<int>(p.padded_columns / 8);
  const int first = at.tile * Shape::kVectors + lane;
  Codes* dst = reinterpret_cast<Codes*>(p.output + (at.batch * p.rows + out_row) * p.output_row_bytes()) + first;
#pragma unroll
  for (int r = 0; r < Shape::kRounds; ++r) {
    if (first + r * 32 < out_vectors) dst[r * 32] = quantize8<kFormat>(to_floats<In>(raw.v[r]), factor[r]);
  }
}

// The tiles of a row, over the layout's padded scale columns.
__host__ __device__ __forceinline__ int tiles_per_row(const QuantizeParams& p) {
  const int64_t blocks_per_tile = kTileRounds * 32 / (p.block_size / 8);  // TileShape's kBlocks
  return static_cast<int>((quant::sf_padded_columns(p.layout, p.scale_columns()) + blocks_per_tile - 1) / blocks_per_tile);
}

struct QuantizeLaunch {
  QuantizeParams p;
  int64_t items_per_warp;
};

template <class In, BlockFormat kFormat, int kBlock>
__global__ void __launch_bounds__(kThreads, kMinCtasPerSm) quantize_kernel(QuantizeLaunch launch) {
  static_assert(kBlock == 16 || kBlock == 32, "a block is 2 or 4 lanes' vectors");
  const QuantizeParams& p = launch.p;
  __shared__ FactorTable table;
  const FactorTable* factors = nullptr;
  if (kFormat == BlockFormat::nvfp4 && p.token_scales == nullptr) {  // before the PDL wait: g is a parameter
    fill_factor_table(table, p.global_scale);
    factors = &table;
  }
  pdl_wait();
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int padded_rows = static_cast<int>(quant::sf_padded_rows(p.layout, p.rows));
  const int tiles = tiles_per_row(p);
  const int64_t items = p.batches * padded_rows * static_cast<int64_t>(tiles);
  const int64_t warp = static_cast<int64_t>(blockIdx.x) * kWarps + static_cast<int64_t>(threadIdx.x) / 32;
  const int64_t first = warp * launch.items_per_warp;
  const int64_t last = first + launch.items_per_warp < items ? first + launch.items_per_warp : items;
  if (first < last) {
    const int64_t first_row = first / tiles;
    ItemCursor at{first_row / padded_rows, static_cast<int>(first_row % padded_rows), static_cast<int>(first % tiles)};
    for (int64_t item = first; item < last; ++item) {
      const RawTile<kBlock> raw = load_tile<In, kBlock>(p, at, lane);
      quantize_tile<In, kFormat, kBlock>(p, at, raw, lane, factors);
      at.advance(tiles, padded_rows);
    }
  }
  pdl_launch_dependents();
}

// Per-token NVFP4: token_scales[row] = per_token_scale(amax of the row); one block per row.
template <class In>
__global__ void __launch_bounds__(kThreads) row_amax_kernel(QuantizeParams p) {
  pdl_wait();
  __shared__ float warp_max[kThreads / 32];
  constexpr int kPerVector = 16 / static_cast<int>(sizeof(In));
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const In*>(p.input) + row * p.columns);
    float amax = 0.0f;
    for (int64_t v = threadIdx.x; v < p.columns / kPerVector; v += blockDim.x) {
      const uint4 raw = __ldg(src + v);
      const In* values = reinterpret_cast<const In*>(&raw);
#pragma unroll
      for (int i = 0; i < kPerVector; ++i) amax = fmaxf(amax, fabsf(to_float(values[i])));
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = amax;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < kThreads / 32; ++w) amax = fmaxf(amax, warp_max[w]);
      p.token_scales[row] = quant::per_token_scale(amax);
    }
    __syncthreads();
  }
}

// The items (batch, padded row, tile) shared by at most 4 waves of resident warps (each warp then
// takes a contiguous run), fewer where there are fewer items than warps.
inline unsigned ctas_for(QuantizeLaunch& launch, int sm_count) {
  const QuantizeParams& p = launch.p;
  const int64_t items = p.batches * quant::sf_padded_rows(p.layout, p.rows) * tiles_per_row(p);
  const int64_t max_warps = static_cast<int64_t>(sm_count) * kMinCtasPerSm * kWarps * 4;
  const int64_t warps = items < max_warps ? items : max_warps;
  launch.items_per_warp = (items + warps - 1) / warps;
  const int64_t used_warps = (items + launch.items_per_warp - 1) / launch.items_per_warp;
  return static_cast<unsigned>((used_warps + kWarps - 1) / kWarps);
}

template <class In>
cudaError_t launch_typed(const QuantizeParams& p, int sm_count, cudaStream_t stream) {
  if (p.token_scales != nullptr) {
    const unsigned rows = static_cast<unsigned>(p.rows < int64_t{sm_count} * 32 ? p.rows : int64_t{sm_count} * 32);
    const cudaError_t status = launch_kernel(row_amax_kernel<In>, dim3(rows), dim3(kThreads), 0, stream, p.enable_pdl, p);
    if (status != cudaSuccess) return status;
  }
  QuantizeLaunch args{p, 0};
  const unsigned ctas = ctas_for(args, sm_count);
  const auto launch = [&](void (*kernel)(QuantizeLaunch)) {
    return launch_kernel(kernel, dim3(ctas), dim3(kThreads), 0, stream, p.enable_pdl, args);
  };
  switch (p.format) {
    case BlockFormat::nvfp4:
      return p.block_size == 16 ? launch(quantize_kernel<In, BlockFormat::nvfp4, 16>)
                                : launch(quantize_kernel<In, BlockFormat::nvfp4, 32>);
    case BlockFormat::mxfp4: return launch(quantize_kernel<In, BlockFormat::mxfp4, 32>);
    case BlockFormat::mxfp8: return launch(quantize_kernel<In, BlockFormat::mxfp8, 32>);
  }
  return cudaErrorInvalidValue;
}

}  // namespace kbench::kernels::quantize_detail
