// The obviously-right RMSNorm: one thread per row, plain loops, the sum of squares in double, no
// vectorization, no shared memory. Writes the unrounded y (fp32) and, for the fused add, the stored
// residual (fp32); never modifies its inputs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/norm/rmsnorm.hpp"
#include "kernels/norm/rmsnorm_kernel.cuh"

namespace kbench::kernels {
namespace {

__device__ float load_as_float(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ float load_as_float(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ float round_to(const __nv_bfloat16*, float v) { return __bfloat162float(__float2bfloat16_rn(v)); }
__device__ float round_to(const __half*, float v) { return __half2float(__float2half_rn(v)); }

template <class T>
__global__ void rmsnorm_reference_kernel(const T* input, const T* residual, const T* weight, int64_t rows,
                                         int64_t hidden, int64_t input_stride, int64_t residual_stride,
                                         float eps, float weight_offset, float out_scale, float* out_fp32,
                                         float* residual_fp32) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const T* x = input + row * input_stride;
  const T* r = residual != nullptr ? residual + row * residual_stride : nullptr;

  // v = x (or round_to_T(float(x) + float(r)), the value the fused add stores to the residual).
  double sum_sq = 0.0;
  for (int64_t j = 0; j < hidden; ++j) {
    float v = load_as_float(x, j);
    if (r != nullptr) {
      v = round_to(x, __fadd_rn(v, load_as_float(r, j)));
      residual_fp32[row * hidden + j] = v;
    }
    sum_sq += static_cast<double>(v) * static_cast<double>(v);
  }
  const double rstd = 1.0 / sqrt(sum_sq / static_cast<double>(hidden) + static_cast<double>(eps));
  for (int64_t j = 0; j < hidden; ++j) {
    float v = load_as_float(x, j);
    if (r != nullptr) v = round_to(x, __fadd_rn(v, load_as_float(r, j)));
    const double w = static_cast<double>(weight_offset) + static_cast<double>(load_as_float(weight, j));
    out_fp32[row * hidden + j] = static_cast<float>(static_cast<double>(v) * rstd * w * static_cast<double>(out_scale));
  }
}

}  // namespace

cudaError_t launch_rmsnorm_reference(const RmsNormParams& params, float* out_fp32, float* residual_fp32,
                                     cudaStream_t stream) {
  if (!rmsnorm_detail::params_valid(params)) return cudaErrorInvalidValue;
  const bool fused = params.residual != nullptr;
  if (out_fp32 == nullptr || (fused && residual_fp32 == nullptr)) return cudaErrorInvalidValue;
  if (params.rows == 0) return cudaSuccess;
  constexpr int kThreads = 64;
  const int64_t blocks = (params.rows + kThreads - 1) / kThreads;
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  if (params.in_dtype == DType::bfloat16) {
    using T = __nv_bfloat16;
    rmsnorm_reference_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const T*>(params.input), static_cast<const T*>(params.residual),
        static_cast<const T*>(params.weight), params.rows, params.hidden, params.input_stride,
        params.residual_stride, params.eps, params.weight_offset, params.out_scale, out_fp32,
        residual_fp32);
  } else {
    using T = __half;
    rmsnorm_reference_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const T*>(params.input), static_cast<const T*>(params.residual),
        static_cast<const T*>(params.weight), params.rows, params.hidden, params.input_stride,
        params.residual_stride, params.eps, params.weight_offset, params.out_scale, out_fp32,
        residual_fp32);
  }
  return cudaGetLastError();
}

}  // namespace kbench::kernels
