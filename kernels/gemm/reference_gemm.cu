// reference_gemm (gemm_kernels.hpp): the refcheck's GEMM. Each thread block stages a 16 x 16 tile
// of A and of B in shared memory, dequantized to fp32 as it loads them (the dtype switch and the
// scale lookup happen once per element and tile, not once per multiply-add), and each thread
// accumulates one output element in fp32 in k order. Correct rather than fast: a few seconds at
// most for the largest cases, once per case.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "kernels/gemm/gemm_kernels.hpp"

namespace kbench::kernels::gemm {
namespace {

constexpr int kTile = 16;

__device__ float fp8_value(uint8_t code, __nv_fp8_interpretation_t format) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(code), format)));
}

__device__ float element(const void* data, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::bfloat16: return __bfloat162float(static_cast<const __nv_bfloat16*>(data)[i]);
    case DType::float16: return __half2float(static_cast<const __half*>(data)[i]);
    case DType::float32: return static_cast<const float*>(data)[i];
    case DType::fp8_e4m3: return fp8_value(static_cast<const uint8_t*>(data)[i], __NV_E4M3);
    case DType::fp8_e5m2: return fp8_value(static_cast<const uint8_t*>(data)[i], __NV_E5M2);
    default: return __int_as_float(0x7FC00000);  // NaN: a dtype no GEMM takes fails the refcheck
  }
}

// Operand value (batch b, row i, column c) with its scale applied.
__device__ float dequantized(const ReferenceOperand& o, int64_t k, int64_t tile, ScaleMajor major, int64_t b,
                             int64_t i, int64_t c) {
  if (o.fp4_scales != nullptr) {
    const uint8_t pair = static_cast<const uint8_t*>(o.data)[(i * k + c) / 2];
    const int64_t block = o.fp4_format == quant::BlockFormat::nvfp4 ? 16 : 32;
    const uint8_t sf = o.fp4_scales[quant::sf_offset(o.sf_layout, i, c / block, o.sf_columns)];
    return quant::dequantize_element(o.fp4_format, c % 2 ? pair >> 4 : pair & 0xF, sf, o.global_scale);
  }
  float v = element(o.data, o.dtype, b * o.batch_stride + i * k + c);
  if (o.tensor_scale != nullptr) v *= *o.tensor_scale;
  if (o.block_scales != nullptr) {
    const int64_t block_row = (b * o.scale_batch_rows + i) / o.block_rows;
    v *= o.block_scales[b * o.scale_batch_stride + a_scale_offset(major, o.scale_block_rows, k / tile, block_row, c / tile)];
  }
  return v;
}

__device__ float round_to(DType dtype, float x) {
  switch (dtype) {
    case DType::bfloat16: return __bfloat162float(__float2bfloat16_rn(x));
    case DType::float16: return __half2float(__float2half_rn(x));
    default: return x;
  }
}

__global__ void __launch_bounds__(kTile* kTile) reference_gemm_kernel(ReferenceGemmParams p) {
  __shared__ float a_tile[kTile][kTile + 1];
  __shared__ float b_tile[kTile][kTile + 1];
  const int64_t b = blockIdx.z;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  const int64_t b_row = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.y;  // B's row this thread stages
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < p.k; k0 += kTile) {
    const int64_t c = k0 + threadIdx.x;
    a_tile[threadIdx.y][threadIdx.x] = row < p.m && c < p.k ? dequantized(p.a, p.k, p.tile, p.major, b, row, c) : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = b_row < p.n && c < p.k ? dequantized(p.b, p.k, p.tile, p.major, b, b_row, c) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc = fmaf(a_tile[threadIdx.y][kk], b_tile[threadIdx.x][kk], acc);
    __syncthreads();
  }
  if (row < p.m && col < p.n) {
    if (p.bias != nullptr) acc += __bfloat162float(static_cast<const __nv_bfloat16*>(p.bias)[col]);
    p.out[(b * p.m + row) * p.n + col] = round_to(p.out_dtype, acc);
  }
}

}  // namespace

cudaError_t reference_gemm(const ReferenceGemmParams& params, cudaStream_t stream) {
  if (params.batches <= 0 || params.batches > 65535 || params.m <= 0 || params.n <= 0 || params.k <= 0) {
    return cudaErrorInvalidValue;
  }
  const dim3 grid(static_cast<unsigned>((params.n + kTile - 1) / kTile), static_cast<unsigned>((params.m + kTile - 1) / kTile),
                  static_cast<unsigned>(params.batches));
  if (grid.y > 65535) return cudaErrorInvalidValue;
  reference_gemm_kernel<<<grid, dim3(kTile, kTile), 0, stream>>>(params);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::gemm
