// The sampling family's random inputs (distributions.hpp gives the laws): probability rows, logits
// and uniform integers. Outside timing; deterministic in (seed, element).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/common/tensor_fill.hpp"
#include "kernels/sampling/distributions.hpp"
#include "kernels/sampling/sampling.hpp"
#include "kernels/sampling/sampling_common.cuh"

namespace kbench::kernels::sampling {
namespace {

using sampling_detail::Elem;

constexpr int kThreads = 256;

__device__ __forceinline__ float zipf_weight(uint64_t rank) {
  return exp2f(-static_cast<float>(kZipfExponent) * log2f(static_cast<float>(rank + 1)));
}

// The unnormalised weight of element `col` of row `row`.
__device__ __forceinline__ float raw_weight(uint64_t seed, int64_t row, int64_t col, int64_t cols,
                                            const ZipfPlacement& placement, Distribution distribution) {
  if (distribution == Distribution::flat) return uniform24(seed, static_cast<uint64_t>(row * cols + col));
  return zipf_weight(placement.rank(static_cast<uint64_t>(col)));
}

// One CTA per row: the row's sum in a fixed order, then every weight divided by it.
template <class T>
__global__ void __launch_bounds__(kThreads) probabilities_kernel(T* out, int64_t cols, uint64_t seed,
                                                                  Distribution distribution) {
  __shared__ float scratch[kThreads / 32];
  const int64_t row = blockIdx.x;
  const ZipfPlacement placement = ZipfPlacement::of_row(seed, static_cast<uint64_t>(row), static_cast<uint64_t>(cols));
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += raw_weight(seed, row, c, cols, placement, distribution);
  sum = sampling_detail::block_reduce(sum, [](float a, float b) { return a + b; }, scratch);
  const float inv = 1.0f / sum;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    out[row * cols + c] = Elem<T>::from_float(raw_weight(seed, row, c, cols, placement, distribution) * inv);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) zipf_logits_kernel(T* out, int64_t cols, uint64_t seed) {
  const int64_t row = blockIdx.x;
  const ZipfPlacement placement = ZipfPlacement::of_row(seed, static_cast<uint64_t>(row), static_cast<uint64_t>(cols));
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float rank = static_cast<float>(placement.rank(static_cast<uint64_t>(c)) + 1);
    out[row * cols + c] = Elem<T>::from_float(-static_cast<float>(kZipfExponent) * logf(rank));
  }
}

__global__ void __launch_bounds__(kThreads) uniform_ints_kernel(int32_t* out, int64_t count, int32_t bound,
                                                                uint64_t seed) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<int32_t>(splitmix(splitmix(seed) + static_cast<uint64_t>(i)) % static_cast<uint64_t>(bound));
  }
}

bool rows_valid(const void* out, int64_t rows, int64_t cols) {
  return out != nullptr && rows >= 0 && rows <= 0x7FFFFFFF && cols > 0;
}

template <class Launch>
cudaError_t by_dtype(DType dtype, Launch launch) {
  switch (dtype) {
    case DType::float32: return launch(float{});
    case DType::float16: return launch(__half{});
    case DType::bfloat16: return launch(__nv_bfloat16{});
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t fill_probabilities(void* out, DType dtype, int64_t rows, int64_t cols, uint64_t seed,
                               Distribution distribution, cudaStream_t stream) {
  if (!rows_valid(out, rows, cols)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  return by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    probabilities_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(static_cast<T*>(out), cols, seed,
                                                                                 distribution);
    return cudaGetLastError();
  });
}

cudaError_t fill_logits(void* out, DType dtype, int64_t rows, int64_t cols, uint64_t seed, Distribution distribution,
                        cudaStream_t stream) {
  if (!rows_valid(out, rows, cols)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (distribution == Distribution::flat) return fill_normal(out, dtype, rows * cols, seed, 0.0f, 1.0f, stream);
  return by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    zipf_logits_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(static_cast<T*>(out), cols, seed);
    return cudaGetLastError();
  });
}

cudaError_t fill_uniform_ints(int32_t* out, int64_t count, int32_t bound, uint64_t seed, cudaStream_t stream) {
  if (out == nullptr || count < 0 || bound <= 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  const int64_t blocks = std::min<int64_t>((count + kThreads - 1) / kThreads, 4096);
  uniform_ints_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(out, count, bound, seed);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::sampling
