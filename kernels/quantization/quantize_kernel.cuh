// The block quantization kernels, templated on the input type and the block format; included by
// one translation unit per input dtype.
//
// A warp quantizes tiles of one row. A tile is 4 rounds of 32 lanes x 8 elements, so every load
// (16 bytes a lane) and every code store (4 or 8 bytes a lane) of a warp is contiguous; a block
// spans G lanes (2 for 16-element blocks, 4 for 32): in round r, lanes [G q, G q + G) hold block
// r * 32 / G + q of the tile. The block maxima of each G rounds are reduce-scattered over the G
// lanes (lane l ends with the maximum of round l % G's block), so each lane computes the scales of
// 4 / G blocks and writes their scale bytes, and the factors are all-gathered back before every lane
// quantizes its values. Four rounds amortize a tile's fixed work (loads, stores, scales) over 32
// elements a lane. A warp takes a contiguous run of (batch, row, tile) items (the other warps of the
// SM, 4 CTAs of 256 threads at 64 registers, cover its loads' latency), with a row cursor set once
// per row and moved on by a tile.
// The grid (plan_launch): the items are shared by at most 8 waves of resident warps for the MX
// formats, 6 for NVFP4 with a launch-wide g and 4 for per-token NVFP4. With a launch-wide g, every
// block's factor g / value(SF) comes from a per-CTA table of the 256 e4m3 codes, which the CTA's
// threads fill after issuing their first tile's loads: the loads' latency covers the 256 IEEE
// divisions and the barrier, which delayed the first loads of every new CTA when the table came
// first. 8192 x 8192 bf16 on the H100 at 1980 MHz: 2.829 TB/s at 6 waves, against 2.764 for the
// table filled first at 4 waves. Per-token NVFP4 (a kernel of its own, kPerTokenG) takes g per row
// and divides for each block's factor; it has no table.
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

// The largest magnitudes of 8 values as a packed pair (bf16 / fp16 bits): the maxima of the even
// and the odd elements. Pair maxima are exact and pass over NaNs, as fmaxf does; the reduce-scatter
// keeps the pairs packed and block_amax unpacks once a block.
__device__ __forceinline__ uint32_t pair_max(uint32_t a, uint32_t b, __nv_bfloat16) {
  const __nv_bfloat162 m = __hmax2(*reinterpret_cast<const __nv_bfloat162*>(&a), *reinterpret_cast<const __nv_bfloat162*>(&b));
  return *reinterpret_cast<const uint32_t*>(&m);
}
__device__ __forceinline__ uint32_t pair_max(uint32_t a, uint32_t b, __half) {
  const __half2 m = __hmax2(*reinterpret_cast<const __half2*>(&a), *reinterpret_cast<const __half2*>(&b));
  return *reinterpret_cast<const uint32_t*>(&m);
}
template <class In>
__device__ __forceinline__ uint32_t vector_amax2(const uint4& raw) {
  constexpr uint32_t kMagnitude = 0x7FFF7FFFu;  // clears both signs (bf16 and fp16 alike)
  return pair_max(pair_max(raw.x & kMagnitude, raw.y & kMagnitude, In{}),
                  pair_max(raw.z & kMagnitude, raw.w & kMagnitude, In{}), In{});
}
__device__ __forceinline__ float block_amax(uint32_t pair, __nv_bfloat16) {
  return fmaxf(fmaxf(0.0f, __uint_as_float(pair << 16)), __uint_as_float(pair & 0xFFFF0000u));
}
__device__ __forceinline__ float block_amax(uint32_t pair, __half) {
  const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&pair));
  return fmaxf(fmaxf(0.0f, f.x), f.y);
}

// NVFP4's factors g / value(scale byte), one per e4m3 code, for a launch whose g is the same for
// every row: computed once per CTA (one IEEE division a thread) instead of once per block.
struct FactorTable {
  float value[256];
};

// Whether a kernel takes its NVFP4 factors from the table: NVFP4 with a launch-wide g.
template <BlockFormat kFormat, bool kPerTokenG>
inline constexpr bool kFactorTable = kFormat == BlockFormat::nvfp4 && !kPerTokenG;

// The table, then a barrier that warps reach from different places (in their first tile, or with
// no tile at all), which __syncthreads' aligned barrier forbids.
__device__ __forceinline__ void fill_factor_table(FactorTable& table, float global_scale) {
  for (int code = static_cast<int>(threadIdx.x); code < 256; code += blockDim.x) {
    const float sf_value = quant::e4m3_to_float(static_cast<uint8_t>(code));
    table.value[code] = sf_value == 0.0f ? 0.0f : quant::ieee_div(global_scale, sf_value);
  }
  asm volatile("barrier.sync 0;" ::: "memory");
}

// quant::block_scale, NVFP4's factor from the table where the kernel has one.
template <BlockFormat kFormat, bool kTable>
__device__ __forceinline__ quant::BlockScale block_scale(float amax, float global_scale, const FactorTable& table) {
  if constexpr (kTable) {
    quant::BlockScale s;
    s.sf = quant::e4m3_of_sixth(global_scale * amax);
    s.factor = table.value[s.sf];
    return s;
  } else {
    return quant::block_scale_of_max<kFormat>(amax, global_scale);
  }
}

// The tiles of a row, over the layout's padded scale columns.
__host__ __device__ __forceinline__ int tiles_per_row(const QuantizeParams& p) {
  const int64_t blocks_per_tile = kTileRounds * 32 / (p.block_size / 8);  // TileShape's kBlocks
  return static_cast<int>((quant::sf_padded_columns(p.layout, p.scale_columns()) + blocks_per_tile - 1) / blocks_per_tile);
}

// The launch: the parameters and the sizes derived from them, computed on the host so that the
// kernel reads them as constants rather than holding them in registers.
struct QuantizeLaunch {
  QuantizeParams p;
  int64_t items_per_warp;
  int64_t items;              // batches x padded rows x tiles
  int64_t sf_batch_bytes;     // scale bytes per batch
  int padded_rows;
  int tiles;                  // per row
  int row_vectors;            // 8-element input vectors per row
  int out_vectors;            // output vectors per row (padded columns)
  uint32_t scale_columns;
  uint32_t padded_scale_columns;
  uint32_t sf_group_bytes;    // from one group of 4 scale columns to the next
};

// A lane's place in a row, set once per row and moved on by a tile after each: pointers and counts
// carried from tile to tile cost a few adds, where ptxas recomputed them from (batch, row, tile)
// with ~50 instructions a tile. kPerTokenG: g is the row's (NVFP4), otherwise the launch's, read
// from the parameters.
template <BlockFormat kFormat, int kBlock, bool kPerTokenG>
struct RowCursor {
  using Shape = TileShape<kBlock>;
  using Codes = typename Codes8<kFormat>::type;
  const uint4* src;  // the lane's first input vector in the tile
  Codes* dst;        // its first output vector
  uint8_t* sf;       // the scale bytes of the tile's first group of 4 columns
  uint32_t block;    // the tile's first block
  int vectors;       // data vectors from the lane's first in the tile on (none in a padding row)
  int out_vectors;   // output vectors from there on
  bool data_row;
  float global_scale;

  __device__ __forceinline__ RowCursor(const QuantizeLaunch& l, int64_t batch, int row, int t, int lane) {
    const QuantizeParams& p = l.p;
    data_row = row < p.rows;
    const int64_t out_row = p.shuffle_rows ? quant::shuffled_row(row) : row;
    const int first = t * Shape::kVectors + lane;
    src = reinterpret_cast<const uint4*>(p.input) + (batch * p.rows + row) * l.row_vectors + first;
    dst = reinterpret_cast<Codes*>(p.output + (batch * p.rows + out_row) * p.output_row_bytes()) + first;
    vectors = (data_row ? l.row_vectors : 0) - first;
    out_vectors = l.out_vectors - first;
    block = static_cast<uint32_t>(t * Shape::kBlocks);
    // A tile's blocks are a multiple of 4: tile t starts t kBlocks / 4 groups of 4 columns on.
    sf = p.scales + batch * l.sf_batch_bytes +
         quant::sf_row_offset<uint32_t>(p.layout, static_cast<uint32_t>(out_row), l.scale_columns) +
         static_cast<uint32_t>(t) * (Shape::kBlocks / 4 * l.sf_group_bytes);
    global_scale = kPerTokenG && data_row ? quant::per_token_global_scale(p.token_scales[row]) : p.global_scale;
  }

  __device__ __forceinline__ void next_tile(const QuantizeLaunch& l) {
    src += Shape::kVectors;
    dst += Shape::kVectors;
    sf += Shape::kBlocks / 4 * l.sf_group_bytes;
    block += Shape::kBlocks;
    vectors -= Shape::kVectors;
    out_vectors -= Shape::kVectors;
  }
};

// The cursor's tile: loads, the scales of the lane's blocks (their bytes written), the codes.
// lane_block / lane_sf: the lane's blocks in a tile and their scale bytes' column offsets.
// kFillTableAfterLoads: the warp's first tile in a kernel with a factor table, whose loads are in
// flight while the CTA fills the table.
template <class In, BlockFormat kFormat, int kBlock, bool kPerTokenG, bool kFillTableAfterLoads = false>
__device__ __forceinline__ void quantize_tile(const QuantizeLaunch& l, const RowCursor<kFormat, kBlock, kPerTokenG>& at, int lane,
                                              const uint32_t (&lane_block)[kTileRounds * 8 / kBlock],
                                              const uint32_t (&lane_sf)[kTileRounds * 8 / kBlock], FactorTable& table) {
  using Shape = TileShape<kBlock>;
  constexpr int kG = Shape::kLanesPerBlock;
  constexpr bool kTable = kFactorTable<kFormat, kPerTokenG>;
  uint4 raw[Shape::kRounds];
#pragma unroll
  for (int r = 0; r < Shape::kRounds; ++r) {
    raw[r] = r * 32 < at.vectors ? __ldg(at.src + r * 32) : make_uint4(0u, 0u, 0u, 0u);
  }
  if constexpr (kFillTableAfterLoads) fill_factor_table(table, l.p.global_scale);
  float factor[Shape::kRounds];
#pragma unroll
  for (int j = 0; j < Shape::kRounds / kG; ++j) {
    uint32_t amax[kG];
#pragma unroll
    for (int r = 0; r < kG; ++r) amax[r] = vector_amax2<In>(raw[j * kG + r]);
    // This lane's block: round j G + lane % G, group lane / G.
    const uint32_t pair = reduce_scatter_max<kG>(amax, lane, [](uint32_t a, uint32_t b) { return pair_max(a, b, In{}); });
    const quant::BlockScale scale = block_scale<kFormat, kTable>(block_amax(pair, In{}), at.global_scale, table);
    const uint32_t block = at.block + lane_block[j];
    if (block < l.padded_scale_columns) at.sf[lane_sf[j]] = at.data_row && block < l.scale_columns ? scale.sf : 0;
    float gathered[kG];
    all_gather<kG>(scale.factor, lane, gathered);
#pragma unroll
    for (int r = 0; r < kG; ++r) factor[j * kG + r] = gathered[r];
  }
  if (!at.data_row) return;
#pragma unroll
  for (int r = 0; r < Shape::kRounds; ++r) {
    if (r * 32 < at.out_vectors) at.dst[r * 32] = quantize8<kFormat>(to_floats<In>(raw[r]), factor[r]);
  }
}

// kPerTokenG: NVFP4 with a g per row (token_scales, written by row_amax_kernel); NVFP4 without it
// takes its factors from the table (kFactorTable).
template <class In, BlockFormat kFormat, int kBlock, bool kPerTokenG = false>
__global__ void __launch_bounds__(kThreads, kMinCtasPerSm) quantize_kernel(const __grid_constant__ QuantizeLaunch l) {
  static_assert(kBlock == 16 || kBlock == 32, "a block is 2 or 4 lanes' vectors");
  static_assert(!kPerTokenG || kFormat == BlockFormat::nvfp4, "per-token g is NVFP4's");
  using Shape = TileShape<kBlock>;
  constexpr int kG = Shape::kLanesPerBlock;
  constexpr int kScales = Shape::kRounds / kG;  // blocks a lane scales per tile
  constexpr bool kTable = kFactorTable<kFormat, kPerTokenG>;
  const QuantizeParams& p = l.p;
  __shared__ FactorTable table;
  pdl_wait();
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t warp = static_cast<int64_t>(blockIdx.x) * kWarps + static_cast<int64_t>(threadIdx.x) / 32;
  const int64_t first = warp * l.items_per_warp;
  if (kTable && first >= l.items) fill_factor_table(table, p.global_scale);  // no tile: the table's share and its barrier
  if (first < l.items) {
    int left = static_cast<int>(first + l.items_per_warp < l.items ? l.items_per_warp : l.items - first);
    uint32_t lane_block[kScales];
    uint32_t lane_sf[kScales];
#pragma unroll
    for (int j = 0; j < kScales; ++j) {
      lane_block[j] = static_cast<uint32_t>((j * kG + lane % kG) * (32 / kG) + lane / kG);
      lane_sf[j] = quant::sf_column_offset<uint32_t>(p.layout, lane_block[j]);
    }
    const int64_t first_row = first / l.tiles;
    int64_t batch = first_row / l.padded_rows;
    int row = static_cast<int>(first_row % l.padded_rows);
    int t = static_cast<int>(first % l.tiles);
    if constexpr (kTable) {  // the first tile apart (it fills the table), so that the loop has no check for it
      const RowCursor<kFormat, kBlock, kPerTokenG> at(l, batch, row, t, lane);
      quantize_tile<In, kFormat, kBlock, kPerTokenG, true>(l, at, lane, lane_block, lane_sf, table);
      --left;
      if (++t == l.tiles) {
        t = 0;
        if (++row == l.padded_rows) {
          row = 0;
          ++batch;
        }
      }
    }
    while (left > 0) {
      RowCursor<kFormat, kBlock, kPerTokenG> at(l, batch, row, t, lane);
      const int end = left < l.tiles - t ? t + left : l.tiles;
      left -= end - t;
      for (; t < end; ++t) {
        quantize_tile<In, kFormat, kBlock, kPerTokenG>(l, at, lane, lane_block, lane_sf, table);
        at.next_tile(l);
      }
      if (left == 0) break;
      t = 0;
      if (++row == l.padded_rows) {
        row = 0;
        ++batch;
      }
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

// The launch's sizes, and the items (batch, padded row, tile) shared by at most W waves of
// resident warps (each warp then takes a contiguous run), fewer where there are fewer items than
// warps. Returns the CTAs. W, measured on 8192 x 8192 bf16 (H100, 1980 MHz): 8 for the MX formats
// (+0.9% over 4, session 12); 6 for NVFP4 with a launch-wide g, whose table fill overlaps the first
// tile's loads (2.829 TB/s; 2.808 at 4 waves, 2.746 at 8); 4 for per-token NVFP4, as before the
// overlap (that kernel with the table filled first: 2.764 at 4, 2.747 at 8). 1 or 2 waves were
// slower for every format.
inline unsigned plan_launch(QuantizeLaunch& l, int sm_count) {
  const QuantizeParams& p = l.p;
  l.padded_rows = static_cast<int>(quant::sf_padded_rows(p.layout, p.rows));
  l.tiles = tiles_per_row(p);
  l.items = p.batches * l.padded_rows * static_cast<int64_t>(l.tiles);
  l.sf_batch_bytes = p.scale_bytes_per_batch();
  l.row_vectors = static_cast<int>(p.columns / 8);
  l.out_vectors = static_cast<int>(p.padded_columns / 8);
  l.scale_columns = static_cast<uint32_t>(p.scale_columns());
  l.padded_scale_columns = static_cast<uint32_t>(quant::sf_padded_columns(p.layout, p.scale_columns()));
  l.sf_group_bytes = static_cast<uint32_t>(quant::sf_column_offset(p.layout, 4));
  const int waves = p.format != BlockFormat::nvfp4 ? 8 : p.token_scales == nullptr ? 6 : 4;
  const int64_t max_warps = static_cast<int64_t>(sm_count) * kMinCtasPerSm * kWarps * waves;
  const int64_t warps = l.items < max_warps ? l.items : max_warps;
  l.items_per_warp = (l.items + warps - 1) / warps;
  const int64_t used_warps = (l.items + l.items_per_warp - 1) / l.items_per_warp;
  return static_cast<unsigned>((used_warps + kWarps - 1) / kWarps);
}

template <class In>
cudaError_t launch_typed(const QuantizeParams& p, int sm_count, cudaStream_t stream) {
  const bool per_token = p.token_scales != nullptr;
  if (per_token) {
    const unsigned rows = static_cast<unsigned>(p.rows < int64_t{sm_count} * 32 ? p.rows : int64_t{sm_count} * 32);
    const cudaError_t status = launch_kernel(row_amax_kernel<In>, dim3(rows), dim3(kThreads), 0, stream, p.enable_pdl, p);
    if (status != cudaSuccess) return status;
  }
  QuantizeLaunch args{};
  args.p = p;
  const unsigned ctas = plan_launch(args, sm_count);
  const auto launch = [&](void (*kernel)(QuantizeLaunch)) {
    return launch_kernel(kernel, dim3(ctas), dim3(kThreads), 0, stream, p.enable_pdl, args);
  };
  switch (p.format) {
    case BlockFormat::nvfp4:
      if (per_token) {
        return p.block_size == 16 ? launch(quantize_kernel<In, BlockFormat::nvfp4, 16, true>)
                                  : launch(quantize_kernel<In, BlockFormat::nvfp4, 32, true>);
      }
      return p.block_size == 16 ? launch(quantize_kernel<In, BlockFormat::nvfp4, 16>)
                                : launch(quantize_kernel<In, BlockFormat::nvfp4, 32>);
    case BlockFormat::mxfp4: return launch(quantize_kernel<In, BlockFormat::mxfp4, 32>);
    case BlockFormat::mxfp8: return launch(quantize_kernel<In, BlockFormat::mxfp8, 32>);
  }
  return cudaErrorInvalidValue;
}

}  // namespace kbench::kernels::quantize_detail
