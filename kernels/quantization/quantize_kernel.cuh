// The block quantization kernels, templated on the input type and the block format; included by
// one translation unit per input dtype.
//
// One thread per (batch, row, scale column) of the scale layout's padded grid: it reads its block
// with 16-byte loads (adjacent threads, adjacent blocks: a warp reads 1-2 KB of one row), finds the
// block's amax, writes the block's packed codes with one 8- or 16-byte store (two for MXFP8) and
// its scale byte. Threads on padding rows or columns write only a 0 scale byte. Grid-stride, so
// any size runs on a grid sized for the GPU. Per-token NVFP4 first runs a row-amax kernel (one
// block per row) that writes the token scales the main kernel reads.
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

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

template <class In, BlockFormat kFormat, int kBlock>
__global__ void __launch_bounds__(kThreads) quantize_kernel(QuantizeParams p) {
  static_assert(kBlock % 16 == 0, "blocks are whole pairs of 16-byte loads");
  constexpr int kVectors = kBlock * static_cast<int>(sizeof(In)) / 16;
  constexpr int kOutBytes = kFormat == BlockFormat::mxfp8 ? kBlock : kBlock / 2;
  pdl_wait();
  const int64_t scale_columns = p.scale_columns();
  const int64_t data_blocks = p.columns / kBlock;
  const int64_t padded_rows = quant::sf_padded_rows(p.layout, p.rows);
  const int64_t padded_columns = quant::sf_padded_columns(p.layout, scale_columns);
  const int64_t per_batch = padded_rows * padded_columns;
  const int64_t total = p.batches * per_batch;
  const int64_t scale_bytes = p.scale_bytes_per_batch();
  const int64_t out_row_bytes = p.output_row_bytes();
  for (int64_t item = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; item < total;
       item += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t batch = item / per_batch;
    const int64_t in_batch = item - batch * per_batch;
    const int64_t row = in_batch / padded_columns;
    const int64_t k = in_batch - row * padded_columns;
    uint8_t* scales = p.scales + batch * scale_bytes;
    const int64_t out_row = p.shuffle_rows ? quant::shuffled_row(row) : row;
    if (row >= p.rows || k >= scale_columns) {
      scales[quant::sf_offset(p.layout, row, k, scale_columns)] = 0;
      continue;
    }
    float x[kBlock];
    if (k < data_blocks) {
      const int64_t element = (batch * p.rows + row) * p.columns + k * kBlock;
      const uint4* src = reinterpret_cast<const uint4*>(static_cast<const In*>(p.input) + element);
      uint4 raw[kVectors];
#pragma unroll
      for (int v = 0; v < kVectors; ++v) raw[v] = __ldg(src + v);
      const In* values = reinterpret_cast<const In*>(raw);
#pragma unroll
      for (int i = 0; i < kBlock; ++i) x[i] = to_float(values[i]);
    } else {
#pragma unroll
      for (int i = 0; i < kBlock; ++i) x[i] = 0.0f;  // alignment padding: a zero block
    }
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < kBlock; ++i) amax = fmaxf(amax, fabsf(x[i]));
    const float global_scale =
        p.token_scales != nullptr ? quant::per_token_global_scale(p.token_scales[row]) : p.global_scale;
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
    uint8_t* dst = p.output + (batch * p.rows + out_row) * out_row_bytes + k * kOutBytes;
    if constexpr (kOutBytes == 8) {
      *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(packed);
    } else {
#pragma unroll
      for (int v = 0; v < kOutBytes / 16; ++v) reinterpret_cast<uint4*>(dst)[v] = reinterpret_cast<const uint4*>(packed)[v];
    }
    scales[quant::sf_offset(p.layout, out_row, k, scale_columns)] = scale.sf;
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

// Grid for `items` threads' work: enough blocks to fill the GPU several times over, not more.
inline unsigned grid_for(int64_t items, int sm_count) {
  const int64_t wanted = (items + kThreads - 1) / kThreads;
  const int64_t cap = static_cast<int64_t>(sm_count) * 32;
  return static_cast<unsigned>(wanted < cap ? (wanted > 0 ? wanted : 1) : cap);
}

template <class In>
cudaError_t launch_typed(const QuantizeParams& p, int sm_count, cudaStream_t stream) {
  if (p.token_scales != nullptr) {
    const unsigned rows = static_cast<unsigned>(p.rows < int64_t{sm_count} * 32 ? p.rows : int64_t{sm_count} * 32);
    const cudaError_t status = launch_kernel(row_amax_kernel<In>, dim3(rows), dim3(kThreads), 0, stream, p.enable_pdl, p);
    if (status != cudaSuccess) return status;
  }
  const int64_t items = p.batches * quant::sf_padded_rows(p.layout, p.rows) *
                        quant::sf_padded_columns(p.layout, p.scale_columns());
  const dim3 grid(grid_for(items, sm_count));
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
