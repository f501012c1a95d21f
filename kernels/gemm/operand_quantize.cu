// quantize_per_tensor and quantize_groupwise (gemm_kernels.hpp): the FP8 operands of the GEMM
// routines, built on the device from random bf16 / fp32 tensors.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/gemm/gemm_kernels.hpp"

namespace kbench::kernels::gemm {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 4096;  // grid-stride beyond

__device__ __forceinline__ float bf16_round(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }

// Block-wide maximum of non-negative floats; every thread gets it.
template <int kBlock>
__device__ float block_max(float v) {
  __shared__ float warp_max[kBlock / 32];
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, offset));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = v;
  __syncthreads();
  float m = 0.0f;
  for (int w = 0; w < kBlock / 32; ++w) m = fmaxf(m, warp_max[w]);
  __syncthreads();  // warp_max is reused by the next call
  return m;
}

__global__ void __launch_bounds__(kThreads) amax_kernel(const __nv_bfloat16* x, int64_t count, float* amax) {
  float m = 0.0f;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    m = fmaxf(m, fabsf(__bfloat162float(x[i])));
  }
  m = block_max<kThreads>(m);
  // Non-negative floats order as their bit patterns.
  if (threadIdx.x == 0) atomicMax(reinterpret_cast<unsigned*>(amax), __float_as_uint(m));
}

template <__nv_fp8_interpretation_t kFormat>
__global__ void __launch_bounds__(kThreads) per_tensor_kernel(const __nv_bfloat16* x, int64_t count, float fmax,
                                                              const float* amax, uint8_t* out, float* dequant_scale) {
  // torch computes in bfloat16: amax.clamp(min=1e-12), fmax / amax, x * scale, the clamp.
  const float scale = bf16_round(fmax / fmaxf(*amax, bf16_round(1e-12f)));
  if (blockIdx.x == 0 && threadIdx.x == 0) *dequant_scale = 1.0f / scale;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const float v = fminf(fmaxf(bf16_round(__bfloat162float(x[i]) * scale), -fmax), fmax);
    out[i] = static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, kFormat));
  }
}

// One thread block per scale block (group, block row, k-block); threads stride over its columns.
// A partial last block row (rows not a multiple of block_rows) takes its amax over the rows it has.
__global__ void __launch_bounds__(kThreads) groupwise_kernel(GroupwiseQuantizeParams p) {
  const int64_t block_rows_total = scale_blocks(p.rows, p.block_rows);
  const int64_t k_blocks = p.k / p.tile;
  const int64_t blocks_per_group = block_rows_total * k_blocks;
  const int64_t group = blockIdx.x / blocks_per_group;
  const int64_t block_row = blockIdx.x % blocks_per_group / k_blocks;
  const int64_t k_block = blockIdx.x % k_blocks;
  const int64_t row_begin = block_row * p.block_rows;
  const int64_t row_end = min(row_begin + p.block_rows, p.rows);
  const float* x = p.input + group * p.rows * p.k;
  uint8_t* q = p.output + group * p.rows * p.k;
  float amax = 0.0f;
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t c = k_block * p.tile + threadIdx.x; c < (k_block + 1) * p.tile; c += kThreads) {
      amax = fmaxf(amax, fabsf(x[r * p.k + c]));
    }
  }
  const float scale = groupwise_scale(block_max<kThreads>(amax));
  if (threadIdx.x == 0) {
    p.scales[group * blocks_per_group + a_scale_offset(p.major, block_rows_total, k_blocks, block_row, k_block)] = scale;
  }
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t c = k_block * p.tile + threadIdx.x; c < (k_block + 1) * p.tile; c += kThreads) {
      q[r * p.k + c] = groupwise_quantize(x[r * p.k + c], scale);
    }
  }
}

unsigned grid_for(int64_t count) {
  return static_cast<unsigned>(std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

}  // namespace

cudaError_t amax_bfloat16(const void* bf16_input, int64_t count, float* amax, cudaStream_t stream) {
  if (const cudaError_t e = cudaMemsetAsync(amax, 0, sizeof(float), stream); e != cudaSuccess) return e;
  amax_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(bf16_input), count, amax);
  return cudaGetLastError();
}

cudaError_t quantize_per_tensor(const void* bf16_input, int64_t count, DType fp8_format, float* amax, uint8_t* output,
                                float* dequant_scale, cudaStream_t stream) {
  if (!is_fp8(fp8_format)) return cudaErrorInvalidValue;
  const auto* x = static_cast<const __nv_bfloat16*>(bf16_input);
  if (const cudaError_t e = amax_bfloat16(bf16_input, count, amax, stream); e != cudaSuccess) return e;
  if (fp8_format == DType::fp8_e4m3) {
    per_tensor_kernel<__NV_E4M3><<<grid_for(count), kThreads, 0, stream>>>(x, count, 448.0f, amax, output, dequant_scale);
  } else {
    per_tensor_kernel<__NV_E5M2><<<grid_for(count), kThreads, 0, stream>>>(x, count, 57344.0f, amax, output,
                                                                           dequant_scale);
  }
  return cudaGetLastError();
}

cudaError_t quantize_groupwise(const GroupwiseQuantizeParams& params, cudaStream_t stream) {
  if (params.tile <= 0 || params.block_rows <= 0 || params.k % params.tile != 0) return cudaErrorInvalidValue;
  const int64_t blocks = params.groups * scale_blocks(params.rows, params.block_rows) * (params.k / params.tile);
  if (blocks == 0) return cudaSuccess;
  groupwise_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::gemm
