// Per-tensor FP8: a grid-stride amax (warp maxima folded by atomicMax on the bits: non-negative
// floats order as their bits), then a grid-stride quantization under the scale one thread derived.
#include <algorithm>
#include <cstdint>

#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/moe/half_bits.hpp"
#include "kernels/moe/per_tensor_fp8.hpp"
#include "kernels/moe/permute_quantize.hpp"

namespace kbench::kernels::moe {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 1024;
constexpr float kAmaxFloor = 1e-12f;

__device__ __forceinline__ float load(const void* input, DType dtype, int64_t i) {
  if (dtype == DType::float32) return static_cast<const float*>(input)[i];
  return half_bits_to_float(static_cast<const uint16_t*>(input)[i], dtype == DType::float16);
}

__global__ void __launch_bounds__(kThreads) amax_kernel(PerTensorFp8Params p) {
  float amax = 0.0f;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < p.count;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    amax = fmaxf(amax, fabsf(load(p.input, p.dtype, i)));
  }
  for (int offset = 16; offset > 0; offset >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<unsigned*>(p.amax), __float_as_uint(amax));
}

__global__ void __launch_bounds__(kThreads) quantize_kernel(PerTensorFp8Params p) {
  const float scale = p.fixed_scale > 0.0f ? p.fixed_scale : fmaxf(*p.amax, kAmaxFloor) / gemm::kE4m3Max;
  if (blockIdx.x == 0 && threadIdx.x == 0) *p.scale = scale;
  if (!p.output) return;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < p.count;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    p.output[i] = per_tensor_quantize(load(p.input, p.dtype, i), scale);
  }
}

}  // namespace

cudaError_t launch_per_tensor_fp8(const PerTensorFp8Params& p, cudaStream_t stream) {
  const bool dtype_ok = p.dtype == DType::float32 || p.dtype == DType::bfloat16 || p.dtype == DType::float16;
  const bool from_amax = !(p.fixed_scale > 0.0f);
  if (p.count < 0 || !dtype_ok || !p.scale || (p.count > 0 && !p.input) || (from_amax && !p.amax)) {
    return cudaErrorInvalidValue;
  }
  const auto blocks = static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>(kMaxBlocks, (p.count + kThreads - 1) / kThreads)));
  if (from_amax) {
    if (const cudaError_t zeroed = cudaMemsetAsync(p.amax, 0, sizeof(float), stream); zeroed != cudaSuccess) {
      return zeroed;
    }
    amax_kernel<<<blocks, kThreads, 0, stream>>>(p);
  }
  quantize_kernel<<<blocks, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::moe
