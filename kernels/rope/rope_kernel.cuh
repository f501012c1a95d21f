// The RoPE kernel, templated on the element type; included by one translation unit per dtype.
//
// Memory-bound once the angles are shared: a unit is 16 bytes of a head. A rotation unit holds 8
// rotation pairs (NeoX: elements [8u, 8u+8) with their partners r/2 further on, two 16-byte loads
// and stores) or 4 (interleaved: elements [8u, 8u+8), one load and store); a copy unit moves 8
// elements of the unrotated tail [r, head_dim). A thread takes one unit of a group of heads of one
// token and computes its angles once (computing them per head made the kernel instruction-bound at
// ~1.2 TB/s); adjacent threads take adjacent units. Grid-stride, so any size runs.
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

// The rotation of one unit's pairs (NeoX: kVector, interleaved: kVector / 2), computed once and
// applied to every head of the thread's group.
struct UnitRotation {
  CosSin pair[kVector];
};

__device__ __forceinline__ UnitRotation unit_rotation(const RopeParams& p, int64_t position, int first_pair, int pairs) {
  UnitRotation r;
#pragma unroll
  for (int i = 0; i < kVector; ++i) {
    if (i < pairs) r.pair[i] = pair_rotation(p, position, first_pair + i);
  }
  return r;
}

template <class T>
__device__ __forceinline__ uint4 rotate_interleaved(uint4 raw, const UnitRotation& r) {
  const T* x = reinterpret_cast<const T*>(&raw);
  alignas(16) T y[kVector];
#pragma unroll
  for (int i = 0; i < kVector / 2; ++i) {
    const float even = to_float(x[2 * i]);
    const float odd = to_float(x[2 * i + 1]);
    y[2 * i] = from_float<T>(even * r.pair[i].cos - odd * r.pair[i].sin);
    y[2 * i + 1] = from_float<T>(odd * r.pair[i].cos + even * r.pair[i].sin);
  }
  return *reinterpret_cast<const uint4*>(y);
}

template <class T>
__device__ __forceinline__ void rotate_neox(uint4& raw_low, uint4& raw_high, const UnitRotation& r) {
  const T* low = reinterpret_cast<const T*>(&raw_low);
  const T* high = reinterpret_cast<const T*>(&raw_high);
  alignas(16) T y_low[kVector];
  alignas(16) T y_high[kVector];
#pragma unroll
  for (int i = 0; i < kVector; ++i) {
    const float a = to_float(low[i]);
    const float b = to_float(high[i]);
    y_low[i] = from_float<T>(a * r.pair[i].cos - b * r.pair[i].sin);
    y_high[i] = from_float<T>(b * r.pair[i].cos + a * r.pair[i].sin);
  }
  raw_low = *reinterpret_cast<const uint4*>(y_low);
  raw_high = *reinterpret_cast<const uint4*>(y_high);
}

// One thread per (token, head group, unit): the unit's angles once (the sines and cosines are most
// of the arithmetic), then the unit of every head of the group, kHeadsInFlight heads' loads ahead
// of their stores. Head groups are as large as the GPU's fill allows (launch_typed).
inline constexpr int kHeadsInFlight = 4;

struct RopeLaunch {
  RopeParams p;
  int heads_per_group;
};

template <class T>
__global__ void __launch_bounds__(kThreads) rope_kernel(RopeLaunch launch) {
  pdl_wait();
  const RopeParams& p = launch.p;
  const int heads_per_group = launch.heads_per_group;
  const int half = p.rotary_dim / 2;
  const int rotate_units = (p.interleave ? p.rotary_dim : half) / kVector;
  const int units = rotate_units + (p.head_dim - p.rotary_dim) / kVector;
  const int heads = p.q_heads + p.k_heads;
  const int groups = (heads + heads_per_group - 1) / heads_per_group;
  const int64_t per_token = static_cast<int64_t>(groups) * units;
  const int64_t total = p.tokens * per_token;
  for (int64_t item = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; item < total;
       item += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t token = item / per_token;
    const int in_token = static_cast<int>(item - token * per_token);
    const int group = in_token / units;
    const int unit = in_token - group * units;
    const int head_begin = group * heads_per_group;
    const int head_end = min(head_begin + heads_per_group, heads);
    const bool rotates = unit < rotate_units;
    // Element offsets of this unit's vectors within a head: [first, first + kVector) and, for
    // NeoX, its partners at first + half.
    const int first = rotates ? unit * kVector : p.rotary_dim + (unit - rotate_units) * kVector;
    const bool neox = rotates && !p.interleave;
    UnitRotation r{};
    if (rotates) {
      r = unit_rotation(p, token_position(p, token), p.interleave ? first / 2 : first,
                        p.interleave ? kVector / 2 : kVector);
    }
    for (int h0 = head_begin; h0 < head_end; h0 += kHeadsInFlight) {
      uint4 low[kHeadsInFlight];
      uint4 high[kHeadsInFlight];
#pragma unroll
      for (int j = 0; j < kHeadsInFlight; ++j) {
        const int head = h0 + j;
        if (head >= head_end) break;
        const bool is_q = head < p.q_heads;
        const int64_t row = is_q ? token * p.q_heads + head : token * p.k_heads + (head - p.q_heads);
        const T* in = static_cast<const T*>(is_q ? p.q : p.k) + row * p.head_dim;
        low[j] = __ldg(reinterpret_cast<const uint4*>(in + first));
        if (neox) high[j] = __ldg(reinterpret_cast<const uint4*>(in + first + half));
      }
#pragma unroll
      for (int j = 0; j < kHeadsInFlight; ++j) {
        const int head = h0 + j;
        if (head >= head_end) break;
        const bool is_q = head < p.q_heads;
        const int64_t row = is_q ? token * p.q_heads + head : token * p.k_heads + (head - p.q_heads);
        T* out = static_cast<T*>(is_q ? p.q_out : p.k_out) + row * p.head_dim;
        if (neox) {
          rotate_neox<T>(low[j], high[j], r);
          *reinterpret_cast<uint4*>(out + first + half) = high[j];
        } else if (rotates) {
          low[j] = rotate_interleaved<T>(low[j], r);
        }
        *reinterpret_cast<uint4*>(out + first) = low[j];
      }
    }
  }
  pdl_launch_dependents();
}

// Heads per thread: the fewest groups (each group's threads compute the angles once) that still
// give every SM kThreadsPerSm threads.
inline constexpr int64_t kThreadsPerSm = 2048;

template <class T>
cudaError_t launch_typed(const RopeParams& p, cudaStream_t stream) {
  const int units = ((p.interleave ? p.rotary_dim : p.rotary_dim / 2) + (p.head_dim - p.rotary_dim)) / kVector;
  const int heads = p.q_heads + p.k_heads;
  int device = 0;
  int sms = 132;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
  }
  const int64_t per_group = p.tokens * static_cast<int64_t>(units);
  const int64_t wanted_groups = (static_cast<int64_t>(sms) * kThreadsPerSm + per_group - 1) / per_group;
  const int groups = static_cast<int>(std::min<int64_t>(std::max<int64_t>(wanted_groups, 1), heads));
  const int heads_per_group = (heads + groups - 1) / groups;
  const int64_t total = per_group * ((heads + heads_per_group - 1) / heads_per_group);
  // Grid-stride: a grid beyond 2^31 - 1 blocks loops instead.
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{0x7fffffff});
  return launch_kernel(rope_kernel<T>, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), 0, stream, p.enable_pdl,
                       RopeLaunch{p, heads_per_group});
}

}  // namespace kbench::kernels::rope_detail
