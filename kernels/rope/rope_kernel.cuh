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

// Where a request_offsets kernel searches for a token's request: indptr and offsets staged in
// shared memory (up to kStagedRequests requests: a search there costs no chain of dependent global
// loads per thread, 2% of apply_llama31_rope's time at 16 requests), else the global arrays.
inline constexpr int64_t kStagedRequests = 1024;
struct RequestTable {
  const int32_t* indptr;
  const int32_t* offsets;
};

__device__ __forceinline__ int64_t token_position(const RopeParams& p, const RequestTable& requests, int64_t token) {
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
    if (requests.indptr[mid] <= token) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return requests.offsets[low] + (token - requests.indptr[low]);
}

struct CosSin {
  float cos;
  float sin;
};

// Pair j's frequency f_j (rope.hpp), the same for every token: the kernel computes the table once
// per CTA into shared memory.
__device__ __forceinline__ float pair_frequency(const RopeParams& p, int pair) {
  const float base = powf(p.rope_theta, -2.0f * static_cast<float>(pair) / static_cast<float>(p.rotary_dim));
  const float smooth = fminf(fmaxf(base * p.smooth_a + p.smooth_b, 0.0f), 1.0f);
  return (1.0f - smooth) * base / p.rope_scale + smooth * base;
}

__device__ __forceinline__ CosSin pair_rotation(const RopeParams& p, int64_t position, int pair, const float* frequencies) {
  if (p.cos_sin_cache != nullptr) {
    const float* row = p.cos_sin_cache + position * p.rotary_dim;
    return {row[pair], row[p.rotary_dim / 2 + pair]};
  }
  CosSin r;
  sincosf(static_cast<float>(position) * frequencies[pair], &r.sin, &r.cos);
  return r;
}

// The rotation of one unit's pairs (NeoX: kVector, interleaved: kVector / 2), computed once and
// applied to every head of the thread's group.
struct UnitRotation {
  CosSin pair[kVector];
};

// `pairs` (a multiple of 4) pairs from the fp32 cos/sin cache's row `position`, as whole float4s:
// first_pair and rotary_dim / 2 are multiples of 4.
__device__ __forceinline__ UnitRotation cached_unit_rotation(const float* cache, int rotary_dim, int64_t position,
                                                             int first_pair, int pairs) {
  UnitRotation r;
  const float* row = cache + position * rotary_dim + first_pair;
#pragma unroll
  for (int i = 0; i < kVector; i += 4) {
    if (i < pairs) {
      const float4 c = __ldg(reinterpret_cast<const float4*>(row + i));
      const float4 s = __ldg(reinterpret_cast<const float4*>(row + rotary_dim / 2 + i));
      r.pair[i] = {c.x, s.x};
      r.pair[i + 1] = {c.y, s.y};
      r.pair[i + 2] = {c.z, s.z};
      r.pair[i + 3] = {c.w, s.w};
    }
  }
  return r;
}

__device__ __forceinline__ UnitRotation unit_rotation(const RopeParams& p, int64_t position, int first_pair, int pairs,
                                                      const float* frequencies) {
  if (p.cos_sin_cache != nullptr && pairs % 4 == 0) {
    return cached_unit_rotation(p.cos_sin_cache, p.rotary_dim, position, first_pair, pairs);
  }
  UnitRotation r;
#pragma unroll
  for (int i = 0; i < kVector; ++i) {
    if (i < pairs) r.pair[i] = pair_rotation(p, position, first_pair + i, frequencies);
  }
  return r;
}

template <class T>
__device__ __forceinline__ void to_floats(const uint4& raw, float* y) {
  const T* x = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < kVector; ++i) y[i] = to_float(x[i]);
}

template <class T>
__device__ __forceinline__ uint4 pack(const float* y) {
  alignas(16) T out[kVector];
#pragma unroll
  for (int i = 0; i < kVector; ++i) out[i] = from_float<T>(y[i]);
  return *reinterpret_cast<const uint4*>(out);
}

// The rotated values, in fp32, of one 16-byte vector of interleaved pairs (kVector / 2 pairs, their
// rotations at pair[0 ..]).
template <class T>
__device__ __forceinline__ void interleaved_rotated(const uint4& raw, const CosSin* pair, float* y) {
  float x[kVector];
  to_floats<T>(raw, x);
#pragma unroll
  for (int i = 0; i < kVector / 2; ++i) {
    y[2 * i] = x[2 * i] * pair[i].cos - x[2 * i + 1] * pair[i].sin;
    y[2 * i + 1] = x[2 * i + 1] * pair[i].cos + x[2 * i] * pair[i].sin;
  }
}

// The rotated values, in fp32, of kVector NeoX pairs: element i of `raw_low` with element i of
// `raw_high` (half the rotary dim further on), by pair[i].
template <class T>
__device__ __forceinline__ void neox_rotated(const uint4& raw_low, const uint4& raw_high, const CosSin* pair, float* y_low,
                                             float* y_high) {
  float a[kVector];
  float b[kVector];
  to_floats<T>(raw_low, a);
  to_floats<T>(raw_high, b);
#pragma unroll
  for (int i = 0; i < kVector; ++i) {
    y_low[i] = a[i] * pair[i].cos - b[i] * pair[i].sin;
    y_high[i] = b[i] * pair[i].cos + a[i] * pair[i].sin;
  }
}

template <class T>
__device__ __forceinline__ uint4 rotate_interleaved(uint4 raw, const UnitRotation& r) {
  float y[kVector];
  interleaved_rotated<T>(raw, r.pair, y);
  return pack<T>(y);
}

template <class T>
__device__ __forceinline__ void rotate_neox(uint4& raw_low, uint4& raw_high, const UnitRotation& r) {
  float y_low[kVector];
  float y_high[kVector];
  neox_rotated<T>(raw_low, raw_high, r.pair, y_low, y_high);
  raw_low = pack<T>(y_low);
  raw_high = pack<T>(y_high);
}

// One thread per (token, head group, unit): the unit's angles once (the sines and cosines are most
// of the arithmetic), then the unit of every head of the group, kHeadsInFlight heads' loads ahead
// of their stores. Head groups are as large as the GPU's fill allows (launch_typed).
inline constexpr int kHeadsInFlight = 4;

struct RopeLaunch {
  RopeParams p;
  int heads_per_group;
};

// Shared memory of rope_kernel: the frequency table when the angles are computed (no cos/sin cache),
// then the staged request table (request_offsets, up to kStagedRequests requests).
__host__ __device__ inline bool stages_requests(const RopeParams& p) {
  return p.position_source == RopePositions::request_offsets && p.requests <= kStagedRequests;
}
__host__ __device__ inline int frequency_table_floats(const RopeParams& p) { return p.cos_sin_cache != nullptr ? 0 : p.rotary_dim / 2; }
inline int rope_shared_bytes(const RopeParams& p) {
  const int64_t staged = stages_requests(p) ? 2 * p.requests + 1 : 0;
  return static_cast<int>((frequency_table_floats(p) + staged) * 4);
}

template <class T>
__global__ void __launch_bounds__(kThreads) rope_kernel(RopeLaunch launch) {
  extern __shared__ float frequencies[];  // then the staged request table
  const RopeParams& p = launch.p;
  for (int j = static_cast<int>(threadIdx.x); j < frequency_table_floats(p); j += blockDim.x) frequencies[j] = pair_frequency(p, j);
  pdl_wait();
  RequestTable requests{p.indptr, p.offsets};
  if (stages_requests(p)) {
    auto* indptr = reinterpret_cast<int32_t*>(frequencies + frequency_table_floats(p));
    int32_t* offsets = indptr + p.requests + 1;
    for (int j = static_cast<int>(threadIdx.x); j <= p.requests; j += blockDim.x) {
      indptr[j] = p.indptr[j];
      if (j < p.requests) offsets[j] = p.offsets[j];
    }
    requests = {indptr, offsets};
  }
  if (frequency_table_floats(p) > 0 || stages_requests(p)) __syncthreads();
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
    bool have_rotation = !rotates;
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
      if (!have_rotation) {  // the angles once, while the first heads' loads are in flight
        r = unit_rotation(p, token_position(p, requests, token), p.interleave ? first / 2 : first, p.interleave ? kVector / 2 : kVector,
                          frequencies);
        have_rotation = true;
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
// give every SM kThreadsPerSm threads, for `per_group` threads per group.
inline constexpr int64_t kThreadsPerSm = 2048;

inline int heads_per_thread(int64_t per_group, int heads) {
  const int sms = current_sm_count();
  const int64_t wanted_groups = (static_cast<int64_t>(sms) * kThreadsPerSm + per_group - 1) / std::max<int64_t>(per_group, 1);
  const int groups = static_cast<int>(std::min<int64_t>(std::max<int64_t>(wanted_groups, 1), heads));
  return (heads + groups - 1) / groups;
}

// Grid-stride: a grid beyond 2^31 - 1 blocks loops instead.
inline dim3 grid_for(int64_t threads) {
  return dim3(static_cast<unsigned>(std::min<int64_t>((threads + kThreads - 1) / kThreads, int64_t{0x7fffffff})));
}

template <class T>
cudaError_t launch_typed(const RopeParams& p, cudaStream_t stream) {
  const int units = ((p.interleave ? p.rotary_dim : p.rotary_dim / 2) + (p.head_dim - p.rotary_dim)) / kVector;
  const int heads = p.q_heads + p.k_heads;
  const int64_t per_group = p.tokens * static_cast<int64_t>(units);
  const int group = heads_per_thread(per_group, heads);
  const int64_t total = per_group * ((heads + group - 1) / group);
  return launch_kernel(rope_kernel<T>, grid_for(total), dim3(kThreads), rope_shared_bytes(p), stream, p.enable_pdl,
                       RopeLaunch{p, group});
}

}  // namespace kbench::kernels::rope_detail
