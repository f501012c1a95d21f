// The RoPE kernel, templated on the element type; included by one translation unit per dtype.
//
// Memory-bound: one thread per 16-byte vector of work of one (token, head). A rotation unit holds
// 8 rotation pairs (NeoX: elements [8u, 8u+8) with their partners r/2 further on, two 16-byte loads
// and stores) or 4 (interleaved: elements [8u, 8u+8), one load and store); a copy unit moves 8
// elements of the unrotated tail [r, head_dim). Adjacent threads take adjacent units of one head,
// so a warp reads whole heads contiguously. Grid-stride, so any size runs.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"
#include "kernels/rope/rope.hpp"

namespace kbench::kernels::rope_detail {

inline constexpr int kThreads = 256;
inline constexpr int kVector = 8;  // 2-byte elements per 16-byte load

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

__device__ __forceinline__ int64_t token_position(const RopeParams& p, int64_t token) {
  switch (p.position_source) {
    case RopePositions::pos_ids: return p.pos_ids[token];
    case RopePositions::positions_i64: return p.positions[token];
    case RopePositions::request_offsets: break;
  }
  // The last request whose first token is at or before `token` (indptr is non-decreasing).
  int64_t low = 0;
  int64_t high = p.requests - 1;
  while (low < high) {
    const int64_t mid = (low + high + 1) / 2;
    if (p.indptr[mid] <= token) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return p.offsets[low] + (token - p.indptr[low]);
}

struct CosSin {
  float cos;
  float sin;
};

__device__ __forceinline__ CosSin pair_rotation(const RopeParams& p, int64_t position, int pair) {
  if (p.cos_sin_cache != nullptr) {
    const float* row = p.cos_sin_cache + position * p.rotary_dim;
    return {row[pair], row[p.rotary_dim / 2 + pair]};
  }
  const float base = powf(p.rope_theta, -2.0f * static_cast<float>(pair) / static_cast<float>(p.rotary_dim));
  const float smooth = fminf(fmaxf(base * p.smooth_a + p.smooth_b, 0.0f), 1.0f);
  const float frequency = (1.0f - smooth) * base / p.rope_scale + smooth * base;
  CosSin r;
  sincosf(static_cast<float>(position) * frequency, &r.sin, &r.cos);
  return r;
}

template <class T>
__global__ void __launch_bounds__(kThreads) rope_kernel(RopeParams p) {
  pdl_wait();
  const int half = p.rotary_dim / 2;
  const int rotate_units = (p.interleave ? p.rotary_dim : half) / kVector;
  const int units = rotate_units + (p.head_dim - p.rotary_dim) / kVector;
  const int heads = p.q_heads + p.k_heads;
  const int64_t per_token = static_cast<int64_t>(heads) * units;
  const int64_t total = p.tokens * per_token;
  for (int64_t item = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; item < total;
       item += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t token = item / per_token;
    const int in_token = static_cast<int>(item - token * per_token);
    const int head = in_token / units;
    const int unit = in_token - head * units;
    const bool is_q = head < p.q_heads;
    const int64_t row = is_q ? token * p.q_heads + head : token * p.k_heads + (head - p.q_heads);
    const T* in = static_cast<const T*>(is_q ? p.q : p.k) + row * p.head_dim;
    T* out = static_cast<T*>(is_q ? p.q_out : p.k_out) + row * p.head_dim;
    if (unit >= rotate_units) {
      const int first = p.rotary_dim + (unit - rotate_units) * kVector;
      *reinterpret_cast<uint4*>(out + first) = __ldg(reinterpret_cast<const uint4*>(in + first));
      continue;
    }
    const int64_t position = token_position(p, token);
    const int first = unit * kVector;
    if (p.interleave) {
      const uint4 raw = __ldg(reinterpret_cast<const uint4*>(in + first));
      const T* x = reinterpret_cast<const T*>(&raw);
      alignas(16) T y[kVector];
#pragma unroll
      for (int i = 0; i < kVector / 2; ++i) {
        const CosSin r = pair_rotation(p, position, first / 2 + i);
        const float even = to_float(x[2 * i]);
        const float odd = to_float(x[2 * i + 1]);
        y[2 * i] = from_float<T>(even * r.cos - odd * r.sin);
        y[2 * i + 1] = from_float<T>(odd * r.cos + even * r.sin);
      }
      *reinterpret_cast<uint4*>(out + first) = *reinterpret_cast<const uint4*>(y);
    } else {
      const uint4 raw_low = __ldg(reinterpret_cast<const uint4*>(in + first));
      const uint4 raw_high = __ldg(reinterpret_cast<const uint4*>(in + first + half));
      const T* low = reinterpret_cast<const T*>(&raw_low);
      const T* high = reinterpret_cast<const T*>(&raw_high);
      alignas(16) T y_low[kVector];
      alignas(16) T y_high[kVector];
#pragma unroll
      for (int i = 0; i < kVector; ++i) {
        const CosSin r = pair_rotation(p, position, first + i);
        const float a = to_float(low[i]);
        const float b = to_float(high[i]);
        y_low[i] = from_float<T>(a * r.cos - b * r.sin);
        y_high[i] = from_float<T>(b * r.cos + a * r.sin);
      }
      *reinterpret_cast<uint4*>(out + first) = *reinterpret_cast<const uint4*>(y_low);
      *reinterpret_cast<uint4*>(out + first + half) = *reinterpret_cast<const uint4*>(y_high);
    }
  }
  pdl_launch_dependents();
}

template <class T>
cudaError_t launch_typed(const RopeParams& p, cudaStream_t stream) {
  const int units = ((p.interleave ? p.rotary_dim : p.rotary_dim / 2) + (p.head_dim - p.rotary_dim)) / kVector;
  const int64_t total = p.tokens * (p.q_heads + p.k_heads) * static_cast<int64_t>(units);
  // Grid-stride: a grid beyond 2^31 - 1 blocks loops instead.
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{0x7fffffff});
  return launch_kernel(rope_kernel<T>, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), 0, stream, p.enable_pdl, p);
}

}  // namespace kbench::kernels::rope_detail
