// The block quantization kernels, templated on the input type and the block format; included by
// one translation unit per input dtype.
//
// One thread per (batch, row, scale column) of the scale layout's padded grid: it reads its block
// with 16-byte loads (adjacent threads, adjacent blocks: a warp reads 1-2 KB of one row), finds the
// block's amax, writes the block's packed codes with one 8- or 16-byte store (two for MXFP8) and
// its scale byte. Threads on padding rows or columns write only a 0 scale byte. The grid is
// (scale columns / threads) x (rows it strides over): rows and columns come from the loop, not
// from divisions, and every thread has kRowsInFlight blocks' loads in flight before it computes
// (the kernel issues ~20 instructions per element, so it needs the loads of one block to overlap
// the arithmetic of another). Per-token NVFP4 first runs a row-amax kernel (one block per row)
// that writes the token scales the main kernel reads.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"
#include "kernels/quantization/block_formats.hpp"
#include "kernels/quantization/quantize.hpp"

namespace kbench::kernels::quantize_detail {

using quant::BlockFormat;

inline constexpr int kThreads = 256;
inline constexpr int kRowsInFlight = 2;
inline constexpr int kMinCtasPerSm = 3;  // at most 80 registers: no spills with two 32-element blocks

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

// The raw 16-byte vectors of one block.
template <class In, int kBlock>
struct RawBlock {
  static constexpr int kVectors = kBlock * static_cast<int>(sizeof(In)) / 16;
  uint4 v[kVectors];
};

// Quantizes one block of raw input: writes its packed codes to `dst` and returns its scale byte.
template <class In, BlockFormat kFormat, int kBlock>
__device__ __forceinline__ uint8_t quantize_block(const RawBlock<In, kBlock>& raw, float global_scale, uint8_t* dst) {
  constexpr int kOutBytes = kFormat == BlockFormat::mxfp8 ? kBlock : kBlock / 2;
  const In* values = reinterpret_cast<const In*>(raw.v);
  float x[kBlock];
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < kBlock; ++i) {
    x[i] = to_float(values[i]);
    amax = fmaxf(amax, fabsf(x[i]));
  }
  const quant::BlockScale scale = quant::block_scale(kFormat, amax, global_scale);
  alignas(16) uint8_t packed[kOutBytes];
  if constexpr (kFormat == BlockFormat::mxfp8) {
#pragma unroll
    for (int i = 0; i < kBlock; ++i) packed[i] = quant::quantize_element(kFormat, x[i], scale.factor);
  } else {
#pragma unroll
    for (int i = 0; i < kBlock / 2; ++i) {
      packed[i] = static_cast<uint8_t>(quant::quantize_element(kFormat, x[2 * i], scale.factor) |
                                       (quant::quantize_element(kFormat, x[2 * i + 1], scale.factor) << 4));
    }
  }
  if constexpr (kOutBytes == 8) {
    *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(packed);
  } else {
#pragma unroll
    for (int v = 0; v < kOutBytes / 16; ++v) reinterpret_cast<uint4*>(dst)[v] = reinterpret_cast<const uint4*>(packed)[v];
  }
  return scale.sf;
}

template <class In, BlockFormat kFormat, int kBlock>
__global__ void __launch_bounds__(kThreads, kMinCtasPerSm) quantize_kernel(QuantizeParams p) {
  static_assert(kBlock % 16 == 0, "blocks are whole pairs of 16-byte loads");
  using Raw = RawBlock<In, kBlock>;
  constexpr int kOutBytes = kFormat == BlockFormat::mxfp8 ? kBlock : kBlock / 2;
  pdl_wait();
  // 32-bit rows and columns (the launch checks they fit); 64-bit offsets.
  const int rows = static_cast<int>(p.rows);
  const int scale_columns = static_cast<int>(p.scale_columns());
  const int data_blocks = static_cast<int>(p.columns / kBlock);
  const int padded_rows = static_cast<int>(quant::sf_padded_rows(p.layout, p.rows));
  const int padded_columns = static_cast<int>(quant::sf_padded_columns(p.layout, scale_columns));
  const int64_t scale_bytes = p.scale_bytes_per_batch();
  const int64_t out_row_bytes = p.output_row_bytes();
  const int k = static_cast<int>(blockIdx.x) * kThreads + static_cast<int>(threadIdx.x);
  if (k >= padded_columns) {
    pdl_launch_dependents();
    return;
  }
  const int row_step = static_cast<int>(gridDim.y);
  for (int64_t batch = 0; batch < p.batches; ++batch) {
    uint8_t* scales = p.scales + batch * scale_bytes;
    const In* input = static_cast<const In*>(p.input) + batch * p.rows * p.columns;
    uint8_t* output = p.output + batch * p.rows * out_row_bytes;
    for (int first = static_cast<int>(blockIdx.y); first < padded_rows; first += kRowsInFlight * row_step) {
      // Loads of every row of this step first, then the arithmetic.
      Raw raw[kRowsInFlight];
#pragma unroll
      for (int j = 0; j < kRowsInFlight; ++j) {
        const int row = first + j * row_step;
        if (row < rows && k < data_blocks) {
          const uint4* src = reinterpret_cast<const uint4*>(input + static_cast<int64_t>(row) * p.columns +
                                                            static_cast<int64_t>(k) * kBlock);
#pragma unroll
          for (int v = 0; v < Raw::kVectors; ++v) raw[j].v[v] = __ldg(src + v);
        } else {
#pragma unroll
          for (int v = 0; v < Raw::kVectors; ++v) raw[j].v[v] = make_uint4(0u, 0u, 0u, 0u);  // padding: a zero block
        }
      }
#pragma unroll
      for (int j = 0; j < kRowsInFlight; ++j) {
        const int row = first + j * row_step;
        if (row >= padded_rows) break;
        if (row >= rows || k >= scale_columns) {
          scales[quant::sf_offset(p.layout, row, k, scale_columns)] = 0;
          continue;
        }
        const int out_row = p.shuffle_rows ? static_cast<int>(quant::shuffled_row(row)) : row;
        const float global_scale =
            p.token_scales != nullptr ? quant::per_token_global_scale(p.token_scales[row]) : p.global_scale;
        uint8_t* dst = output + static_cast<int64_t>(out_row) * out_row_bytes + static_cast<int64_t>(k) * kOutBytes;
        scales[quant::sf_offset(p.layout, out_row, k, scale_columns)] =
            quantize_block<In, kFormat, kBlock>(raw[j], global_scale, dst);
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

// Grid: enough CTAs of scale columns to cover a row, and enough rows of them to fill the GPU
// several times over (each thread strides over the rest).
inline dim3 grid_for(const QuantizeParams& p, int sm_count) {
  const int64_t columns = quant::sf_padded_columns(p.layout, p.scale_columns());
  const int64_t column_ctas = (columns + kThreads - 1) / kThreads;
  const int64_t rows = quant::sf_padded_rows(p.layout, p.rows);
  const int64_t wanted_rows = (static_cast<int64_t>(sm_count) * 16 + column_ctas - 1) / column_ctas;
  const int64_t row_ctas = rows < wanted_rows ? rows : wanted_rows;
  return dim3(static_cast<unsigned>(column_ctas), static_cast<unsigned>(row_ctas < 65535 ? row_ctas : 65535));
}

template <class In>
cudaError_t launch_typed(const QuantizeParams& p, int sm_count, cudaStream_t stream) {
  if (p.token_scales != nullptr) {
    const unsigned rows = static_cast<unsigned>(p.rows < int64_t{sm_count} * 32 ? p.rows : int64_t{sm_count} * 32);
    const cudaError_t status = launch_kernel(row_amax_kernel<In>, dim3(rows), dim3(kThreads), 0, stream, p.enable_pdl, p);
    if (status != cudaSuccess) return status;
  }
  const dim3 grid = grid_for(p, sm_count);
  switch (p.format) {
    case BlockFormat::nvfp4:
      return p.block_size == 16
                 ? launch_kernel(quantize_kernel<In, BlockFormat::nvfp4, 16>, grid, dim3(kThreads), 0, stream, p.enable_pdl, p)
                 : launch_kernel(quantize_kernel<In, BlockFormat::nvfp4, 32>, grid, dim3(kThreads), 0, stream, p.enable_pdl, p);
    case BlockFormat::mxfp4:
      return launch_kernel(quantize_kernel<In, BlockFormat::mxfp4, 32>, grid, dim3(kThreads), 0, stream, p.enable_pdl, p);
    case BlockFormat::mxfp8:
      return launch_kernel(quantize_kernel<In, BlockFormat::mxfp8, 32>, grid, dim3(kThreads), 0, stream, p.enable_pdl, p);
  }
  return cudaErrorInvalidValue;
}

}  // namespace kbench::kernels::quantize_detail
