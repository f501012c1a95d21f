// fill_normal, fill_uniform, poison, convert_to_float (see tensor_fill.hpp).
//
// The fills: elements 2p and 2p + 1 take the two 24-bit uniforms of the draw splitmix64(key + p),
// key = splitmix64(seed); fill_normal turns them into a Box-Muller pair (cos for even i, sin for odd
// i), fill_uniform scales each to [low, high). The value depends on (seed, i) only; the math uses
// the accurate logf / sqrtf / sincospif (no fast-math intrinsics), so every GPU gives the same bits.
// Each thread produces 8 consecutive elements per step (one 16-byte store for 16-bit types),
// grid-stride.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/tensor_fill.hpp"

namespace kbench::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kChunk = 8;  // elements per thread per step

__host__ __device__ __forceinline__ uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Element storage types and rounding from float.
struct Bf16 {
  using Bits = uint16_t;
  static __device__ Bits from_float(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
  static __device__ float to_float(Bits b) { return __bfloat162float(__ushort_as_bfloat16(b)); }
};
struct Fp16 {
  using Bits = uint16_t;
  static __device__ Bits from_float(float f) { return __half_as_ushort(__float2half_rn(f)); }
  static __device__ float to_float(Bits b) { return __half2float(__ushort_as_half(b)); }
};
struct Fp32 {
  using Bits = float;
  static __device__ Bits from_float(float f) { return f; }
  static __device__ float to_float(Bits b) { return b; }
};
template <__nv_fp8_interpretation_t kKind>
struct Fp8 {
  using Bits = uint8_t;
  static __device__ Bits from_float(float f) {
    return static_cast<Bits>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, kKind));
  }
  static __device__ float to_float(Bits b) {
    const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), kKind);
    return __half2float(__half(h));
  }
};
using E4m3 = Fp8<__NV_E4M3>;
using E5m2 = Fp8<__NV_E5M2>;

// The draws of the fills: two elements of T from one 64-bit random value h.
struct NormalDraw {
  float mean;
  float stddev;
  template <class T>
  __device__ void pair(uint64_t h, typename T::Bits& first, typename T::Bits& second) const {
    const float u1 = static_cast<float>((h >> 40) + 1) * 0x1p-24f;            // (0, 1]
    const float u2 = static_cast<float>((h >> 16) & 0xFFFFFFull) * 0x1p-24f;  // [0, 1)
    const float radius = sqrtf(-2.0f * logf(u1));
    float s, c;
    sincospif(2.0f * u2, &s, &c);
    first = T::from_float(fmaf(stddev, radius * c, mean));
    second = T::from_float(fmaf(stddev, radius * s, mean));
  }
};

struct UniformDraw {
  float low;
  float high;
  template <class T>
  __device__ typename T::Bits value(float u) const {
    const typename T::Bits v = T::from_float(fmaf(high - low, u, low));
    // A value that rounds up to `high` in T becomes `low`, as torch.rand does: the range stays half-open.
    return T::to_float(v) >= high ? T::from_float(low) : v;
  }
  template <class T>
  __device__ void pair(uint64_t h, typename T::Bits& first, typename T::Bits& second) const {
    first = value<T>(static_cast<float>(h >> 40) * 0x1p-24f);
    second = value<T>(static_cast<float>((h >> 16) & 0xFFFFFFull) * 0x1p-24f);
  }
};

template <class T, class Draw>
__global__ void __launch_bounds__(kThreads) fill_kernel(typename T::Bits* data, int64_t count, uint64_t key, Draw draw,
                                                        bool vector_ok) {
  using Bits = typename T::Bits;
  constexpr int kBytes = static_cast<int>(sizeof(Bits)) * kChunk;
  static_assert(kBytes % 8 == 0);
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t first = c * kChunk;
    union {
      Bits b[kChunk];
      uint4 q[(kBytes + 15) / 16];
      uint2 d[kBytes / 8];
    } v;
#pragma unroll
    for (int j = 0; j < kChunk; j += 2) {
      draw.template pair<T>(splitmix64(key + (static_cast<uint64_t>(first + j) >> 1)), v.b[j], v.b[j + 1]);
    }
    if (vector_ok && first + kChunk <= count) {
      if constexpr (kBytes % 16 == 0) {
        uint4* dst = reinterpret_cast<uint4*>(data + first);
#pragma unroll
        for (int k = 0; k < kBytes / 16; ++k) dst[k] = v.q[k];
      } else {
        uint2* dst = reinterpret_cast<uint2*>(data + first);
#pragma unroll
        for (int k = 0; k < kBytes / 8; ++k) dst[k] = v.d[k];
      }
    } else {
      for (int j = 0; j < kChunk && first + j < count; ++j) data[first + j] = v.b[j];
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) convert_kernel(const typename T::Bits* data, int64_t count, float* out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = T::to_float(data[i]);
  }
}

unsigned grid_for(int64_t work_items) {
  int64_t blocks = (work_items + kThreads - 1) / kThreads;
  constexpr int64_t kMaxBlocks = 8192;  // grid-stride beyond: ~60 blocks per SM on an H100
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

template <class T, class Draw>
cudaError_t fill_typed(void* data, int64_t count, uint64_t seed, Draw draw, cudaStream_t stream) {
  using Bits = typename T::Bits;
  const bool vector_ok = reinterpret_cast<uintptr_t>(data) % (sizeof(Bits) * kChunk >= 16 ? 16 : 8) == 0;
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  fill_kernel<T><<<grid_for(chunks), kThreads, 0, stream>>>(static_cast<Bits*>(data), count, splitmix64(seed), draw,
                                                            vector_ok);
  return cudaGetLastError();
}

template <class Draw>
cudaError_t fill(void* data, DType dtype, int64_t count, uint64_t seed, Draw draw, cudaStream_t stream) {
  if (count < 0 || (count > 0 && data == nullptr)) return cudaErrorInvalidValue;
  if (reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) != 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  switch (dtype) {
    case DType::bfloat16: return fill_typed<Bf16>(data, count, seed, draw, stream);
    case DType::float16: return fill_typed<Fp16>(data, count, seed, draw, stream);
    case DType::float32: return fill_typed<Fp32>(data, count, seed, draw, stream);
    case DType::fp8_e4m3: return fill_typed<E4m3>(data, count, seed, draw, stream);
    case DType::fp8_e5m2: return fill_typed<E5m2>(data, count, seed, draw, stream);
    case DType::int32:
    case DType::int64: break;
    case DType::uint8: break;  // index and raw-byte types: nothing random to fill them with
  }
  return cudaErrorInvalidValue;
}

template <class T>
cudaError_t convert_typed(const void* data, int64_t count, float* out, cudaStream_t stream) {
  convert_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(static_cast<const typename T::Bits*>(data), count, out);
  return cudaGetLastError();
}

}  // namespace

cudaError_t fill_normal(void* data, DType dtype, int64_t count, uint64_t seed, float mean, float stddev,
                        cudaStream_t stream) {
  return fill(data, dtype, count, seed, NormalDraw{mean, stddev}, stream);
}

cudaError_t fill_uniform(void* data, DType dtype, int64_t count, uint64_t seed, float low, float high,
                         cudaStream_t stream) {
  if (!(low < high)) return cudaErrorInvalidValue;
  return fill(data, dtype, count, seed, UniformDraw{low, high}, stream);
}

cudaError_t poison(void* data, int64_t bytes, cudaStream_t stream) {
  if (bytes < 0 || (bytes > 0 && data == nullptr)) return cudaErrorInvalidValue;
  if (bytes == 0) return cudaSuccess;
  return cudaMemsetAsync(data, 0xFF, static_cast<size_t>(bytes), stream);
}

cudaError_t convert_to_float(const void* data, DType dtype, int64_t count, float* out, cudaStream_t stream) {
  if (count < 0 || (count > 0 && (data == nullptr || out == nullptr))) return cudaErrorInvalidValue;
  if (reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) != 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  switch (dtype) {
    case DType::bfloat16: return convert_typed<Bf16>(data, count, out, stream);
    case DType::float16: return convert_typed<Fp16>(data, count, out, stream);
    case DType::float32: return convert_typed<Fp32>(data, count, out, stream);
    case DType::fp8_e4m3: return convert_typed<E4m3>(data, count, out, stream);
    case DType::fp8_e5m2: return convert_typed<E5m2>(data, count, out, stream);
    case DType::int32:
    case DType::int64: break;
    case DType::uint8: break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace kbench::kernels
