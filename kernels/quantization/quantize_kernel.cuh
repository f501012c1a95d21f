// The block quantization kernels, templated on the input type and the block format; included by
// one translation unit per input dtype.
//
// A warp quantizes tiles of one row. A tile is G rounds of 32 lanes x 8 elements, G = the lanes a
// block spans (2 for 16-element blocks, 4 for 32), so every load (16 bytes a lane) and every code
// store (4 or 8 bytes a lane) of a warp is contiguous, and a tile holds 32 blocks: in round r,
// lanes [G q, G q + G) hold block r * 32 / G + q. The rounds' block maxima are reduce-scattered over
// the G lanes (lane l ends with the maximum of its block of round l % G), so each lane computes one
// block's scale and writes its scale byte, and the G rounds' factors are all-gathered back before
// every lane quantizes its values. A warp takes a contiguous run of (batch, row, tile) items (the
// other warps of the SM cover its loads' latency: prefetching the next tile took 105 registers).
// Rows past the data (the layout's padding
// rows) and scale columns past the data write 0 scale bytes; columns in [columns, padded_columns)
// are quantized as zeros. Per-token NVFP4 first runs a row-amax kernel (one block per row) that
// writes the token scales the main kernel reads.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

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
inline constexpr int kMinCtasPerSm = 3;  // at most 80 registers, no spills

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

template <class In>
__device__ __forceinline__ float8 to_floats(const uint4& raw) {
  const In* values = reinterpret_cast<const In*>(&raw);
  float8 out;
#pragma unroll
  for (int i = 0; i < 8; ++i) out.v[i] = to_float(values[i]);
  return out;
}

template <int kBlock>
struct TileShape {
  static constexpr int kLanesPerBlock = kBlock / 8;  // G: one 16-byte vector of 8 elements a lane
  static constexpr int kRounds = kLanesPerBlock;
  static constexpr int kBlocks = 32;                  // per tile: 32 / G a round
  static constexpr int kVectors = kRounds * 32;       // 8-element vectors per tile
};

// One item's raw input: G 16-byte vectors a lane.
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

template <class In, int kBlock>
__device__ __forceinline__ RawTile<kBlock> load_tile(const QuantizeParams& p, const ItemCursor& at, int lane) {
  using Shape = TileShape<kBlock>;
  RawTile<kBlock> raw;
  const int vectors = static_cast<int>(p.columns / 8);  // vectors of data in a row
  const bool data_row = at.row < p.rows;
  const In* row_input = static_cast<const In*>(p.input) + (at.batch * p.rows + (data_row ? at.row : 0)) * p.columns;
#pragma unroll
  for (int r = 0; r < Shape::kRounds; ++r) {
    const int vector = at.tile * Shape::kVectors + r * 32 + lane;
    raw.v[r] = data_row && vector < vectors ? __ldg(reinterpret_cast<const uint4*>(row_input) + vector)
                                            : make_uint4(0u, 0u, 0u, 0u);  // padding: zeros
  }
  return raw;
}

template <class In, BlockFormat kFormat, int kBlock>
__device__ __forceinline__ void quantize_tile(const QuantizeParams& p, const ItemCursor& at, const RawTile<kBlock>& raw,
                                              int lane) {
  using Shape = TileShape<kBlock>;
  constexpr int kG = Shape::kLanesPerBlock;
  constexpr int kCodeBytes = kFormat == BlockFormat::mxfp8 ? 8 : 4;
  const int scale_columns = static_cast<int>(p.scale_columns());
  const int padded_scale_columns = static_cast<int>(quant::sf_padded_columns(p.layout, scale_columns));
  const bool data_row = at.row < p.rows;
  const int out_row = p.shuffle_rows ? static_cast<int>(quant::shuffled_row(at.row)) : at.row;

  // The floats are converted again when quantized (one instruction each) rather than held in
  // registers (a tile's 32 floats would spill at 80 registers).
  float amax[Shape::kRounds];
#pragma unroll
  for (int r = 0; r < Shape::kRounds; ++r) {
    const float8 x = to_floats<In>(raw.v[r]);
    amax[r] = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) amax[r] = fmaxf(amax[r], fabsf(x.v[i]));
  }
  // This lane's block: round lane % G, group lane / G.
  const float block_amax = reduce_scatter_max<kG>(amax, lane);
  const int block = at.tile * Shape::kBlocks + (lane % kG) * (32 / kG) + lane / kG;
  const float global_scale = p.token_scales != nullptr && data_row
                                 ? quant::per_token_global_scale(p.token_scales[at.row])
                                 : p.global_scale;
  const quant::BlockScale scale = quant::block_scale(kFormat, block_amax, global_scale);
  uint8_t* scales = p.scales + at.batch * p.scale_bytes_per_batch();
  if (block < padded_scale_columns) {
    scales[quant::sf_offset(p.layout, out_row, block, scale_columns)] = data_row && block < scale_columns ? scale.sf : 0;
  }
  float factor[Shape::kRounds];
  all_gather<kG>(scale.factor, lane, factor);
  if (!data_row) return;
  const int out_vectors = static_cast<int>(p.padded_columns / 8);
  uint8_t* out = p.output + (at.batch * p.rows + out_row) * p.output_row_bytes();
#pragma unroll
  for (int r = 0; r < Shape::kRounds; ++r) {
    const int vector = at.tile * Shape::kVectors + r * 32 + lane;
    if (vector >= out_vectors) continue;
    *reinterpret_cast<typename Codes8<kFormat>::type*>(out + static_cast<int64_t>(vector) * kCodeBytes) =
        quantize8<kFormat>(to_floats<In>(raw.v[r]), factor[r]);
  }
}

// The tiles of a row: 32 blocks each, over the layout's padded scale columns.
__host__ __device__ __forceinline__ int tiles_per_row(const QuantizeParams& p) {
  return static_cast<int>((quant::sf_padded_columns(p.layout, p.scale_columns()) + 31) / 32);
}

struct QuantizeLaunch {
  QuantizeParams p;
  int64_t items_per_warp;
};

template <class In, BlockFormat kFormat, int kBlock>
__global__ void __launch_bounds__(kThreads, kMinCtasPerSm) quantize_kernel(QuantizeLaunch launch) {
  static_assert(kBlock == 16 || kBlock == 32, "a block is 2 or 4 lanes' vectors");
  const QuantizeParams& p = launch.p;
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
      quantize_tile<In, kFormat, kBlock>(p, at, raw, lane);
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
