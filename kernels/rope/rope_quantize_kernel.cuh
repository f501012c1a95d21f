// The FP8 RoPE kernel (rope_quantize_fp8, mla_rope_quantize_fp8,
// rope_quantize_fp8_append_paged_kv_cache), templated on the input type and the fp8 format;
// included by one translation unit per input dtype. It reuses the rotation of rope_kernel.cuh (the
// cached angles, the NeoX and interleaved pair rotations in fp32) and only differs in what it
// stores: fp8 (scaled, round to nearest even, saturated) into separate rope/nope outputs or into the
// paged K/V caches.
//
// A unit is 16 elements: one 16-byte fp8 store from two 16-byte loads (NeoX rotation units: the 16
// elements and their partners half the rotary dim further on, four loads and two stores). Work items
// of a token, adjacent threads taking adjacent units:
//   rotation items: (head group over q then k heads, rotation unit): the unit's angles once from the
//     cache, then every head of the group, kQuantHeadsInFlight heads' loads ahead of their stores;
//   nope items: (q or k head, unit of the unrotated part): scaled copies;
//   V items (paged append): (k head, unit of v): scaled copies into the V cache.
// Grid-stride, so any size runs.
#pragma once

#include <cuda_fp8.h>

#include "kernels/rope/rope_kernel.cuh"

namespace kbench::kernels::rope_detail {

inline constexpr int kQuantVector = 16;  // elements per unit (one 16-byte fp8 store)
inline constexpr int kQuantHeadsInFlight = 2;

// 16 floats times `scale` as 16 fp8 bytes (element 0 in the lowest byte).
template <__nv_fp8_interpretation_t kKind>
__device__ __forceinline__ uint4 pack_fp8(const float* y, float scale) {
  uint32_t word[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t low = __nv_cvt_float2_to_fp8x2(make_float2(y[4 * i] * scale, y[4 * i + 1] * scale), __NV_SATFINITE, kKind);
    const uint32_t high =
        __nv_cvt_float2_to_fp8x2(make_float2(y[4 * i + 2] * scale, y[4 * i + 3] * scale), __NV_SATFINITE, kKind);
    word[i] = low | (high << 16);
  }
  return make_uint4(word[0], word[1], word[2], word[3]);
}

// One copy unit: 16 elements loaded (two 16-byte loads), then stored times `scale` as 16 fp8 bytes.
struct CopyUnit {
  uint4 a;
  uint4 b;
};

template <class T>
__device__ __forceinline__ CopyUnit load_unit(const T* src) {
  return {__ldg(reinterpret_cast<const uint4*>(src)), __ldg(reinterpret_cast<const uint4*>(src + kVector))};
}

template <class T, __nv_fp8_interpretation_t kKind>
__device__ __forceinline__ void store_unit(const CopyUnit& unit, uint8_t* dst, float scale) {
  float y[kQuantVector];
  to_floats<T>(unit.a, y);
  to_floats<T>(unit.b, y + kVector);
  *reinterpret_cast<uint4*>(dst) = pack_fp8<kKind>(y, scale);
}

__host__ __device__ __forceinline__ bool is_paged(const RopeQuantizeParams& p) { return p.k_cache != nullptr; }
__host__ __device__ __forceinline__ int head_dim_of(const RopeQuantizeParams& p) { return p.rope_dim + p.no_rope_dim; }

// Where a paged-append token's head vectors go: element e of K head h at base + h * head_stride + e.
struct CacheEntry {
  int64_t base = 0;
  int64_t head_stride = 0;
};

__device__ __forceinline__ CacheEntry cache_entry(const RopeQuantizeParams& p, int32_t request, int64_t token) {
  const int64_t slot = static_cast<int64_t>(__ldg(p.kv_indptr + request)) * p.page_size + __ldg(p.positions + token);
  const int64_t page = __ldg(p.kv_indices + slot / p.page_size);
  const int64_t entry = slot % p.page_size;
  const int64_t d = head_dim_of(p);
  if (p.hnd) return {(page * p.k_heads * p.page_size + entry) * d, p.page_size * d};
  return {(page * p.page_size + entry) * p.k_heads * d, d};
}

struct RopeQuantizeLaunch {
  RopeQuantizeParams p;
  int heads_per_group;
  int groups;
  int rope_units;  // per head
  int nope_units;  // per head
  int v_units;     // per k head, paged append only (else 0)
};

template <class T, __nv_fp8_interpretation_t kKind>
__global__ void __launch_bounds__(kThreads, 2) rope_quantize_kernel(RopeQuantizeLaunch launch) {
  pdl_wait();
  const RopeQuantizeParams& p = launch.p;
  const int heads = p.q_heads + p.k_heads;
  const int half = p.rope_dim / 2;
  const int64_t rope_items = static_cast<int64_t>(launch.groups) * launch.rope_units;
  const int64_t nope_items = static_cast<int64_t>(heads) * launch.nope_units;
  const int64_t per_token = rope_items + nope_items + static_cast<int64_t>(p.k_heads) * launch.v_units;
  const int64_t total = p.tokens * per_token;
  const bool paged = is_paged(p);
  auto* q_rope_out = static_cast<uint8_t*>(p.q_rope_out);
  auto* q_nope_out = static_cast<uint8_t*>(p.q_nope_out);
  auto* k_rope_out = static_cast<uint8_t*>(p.k_rope_out);
  auto* k_nope_out = static_cast<uint8_t*>(p.k_nope_out);
  auto* k_cache = static_cast<uint8_t*>(p.k_cache);
  for (int64_t item = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; item < total;
       item += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t token = item / per_token;
    int64_t in_token = item - token * per_token;
    // Paged append: the token's request, read now but first used after the item's data loads are
    // issued, and its cache entry (a chain of dependent index loads) only where K or V is stored.
    const int32_t request = paged ? __ldg(p.batch_indices + token) : 0;
    CacheEntry entry;
    bool have_entry = false;
    const auto entry_of = [&]() -> const CacheEntry& {
      if (!have_entry) {
        entry = cache_entry(p, request, token);
        have_entry = true;
      }
      return entry;
    };
    if (in_token < rope_items) {
      const int group = static_cast<int>(in_token / launch.rope_units);
      const int first = static_cast<int>(in_token - static_cast<int64_t>(group) * launch.rope_units) * kQuantVector;
      const int64_t position = __ldg(p.pos_ids + token);
      // Interleaved: the unit's 8 pairs start at pair first / 2; NeoX: 16 pairs from pair `first`.
      const UnitRotation r0 =
          cached_unit_rotation(p.cos_sin_cache, p.rope_dim, position, p.interleave ? first / 2 : first, kVector);
      const UnitRotation r1 = p.interleave ? r0 : cached_unit_rotation(p.cos_sin_cache, p.rope_dim, position, first + kVector, kVector);
      const int head_begin = group * launch.heads_per_group;
      const int head_end = min(head_begin + launch.heads_per_group, heads);
      for (int h0 = head_begin; h0 < head_end; h0 += kQuantHeadsInFlight) {
        uint4 in[kQuantHeadsInFlight][4];
#pragma unroll
        for (int j = 0; j < kQuantHeadsInFlight; ++j) {
          const int head = h0 + j;
          if (head >= head_end) break;
          const T* src = head < p.q_heads
                             ? static_cast<const T*>(p.q_rope) + (token * p.q_heads + head) * p.rope_dim
                             : static_cast<const T*>(p.k_rope) + (token * p.k_heads + (head - p.q_heads)) * p.rope_dim;
          in[j][0] = __ldg(reinterpret_cast<const uint4*>(src + first));
          in[j][1] = __ldg(reinterpret_cast<const uint4*>(src + first + kVector));
          if (!p.interleave) {
            in[j][2] = __ldg(reinterpret_cast<const uint4*>(src + first + half));
            in[j][3] = __ldg(reinterpret_cast<const uint4*>(src + first + half + kVector));
          }
        }
        if (request < 0) break;  // padding: the whole token is skipped, as FlashInfer does
#pragma unroll
        for (int j = 0; j < kQuantHeadsInFlight; ++j) {
          const int head = h0 + j;
          if (head >= head_end) break;
          const bool is_q = head < p.q_heads;
          const int kv_head = head - p.q_heads;
          uint8_t* dst;
          if (is_q) {
            dst = q_rope_out + (token * p.q_heads + head) * p.rope_dim;
          } else if (paged) {
            const CacheEntry& e = entry_of();
            dst = k_cache + e.base + kv_head * e.head_stride;
          } else {
            dst = k_rope_out + (token * p.k_heads + kv_head) * p.rope_dim;
          }
          const float scale = is_q ? p.quant_scale_q : p.quant_scale_kv;
          float y[2 * kQuantVector];
          if (p.interleave) {
            interleaved_rotated<T>(in[j][0], r0.pair, y);
            interleaved_rotated<T>(in[j][1], r0.pair + kVector / 2, y + kVector);
          } else {
            neox_rotated<T>(in[j][0], in[j][2], r0.pair, y, y + kQuantVector);
            neox_rotated<T>(in[j][1], in[j][3], r1.pair, y + kVector, y + kQuantVector + kVector);
            *reinterpret_cast<uint4*>(dst + first + half) = pack_fp8<kKind>(y + kQuantVector, scale);
          }
          *reinterpret_cast<uint4*>(dst + first) = pack_fp8<kKind>(y, scale);
        }
      }
      continue;
    }
    in_token -= rope_items;
    if (in_token < nope_items) {
      const int head = static_cast<int>(in_token / launch.nope_units);
      const int first = static_cast<int>(in_token - static_cast<int64_t>(head) * launch.nope_units) * kQuantVector;
      if (head < p.q_heads) {
        const int64_t row = (token * p.q_heads + head) * p.no_rope_dim + first;
        const CopyUnit unit = load_unit(static_cast<const T*>(p.q_nope) + row);
        if (request < 0) continue;
        store_unit<T, kKind>(unit, q_nope_out + row, p.quant_scale_q);
      } else {
        const int kv_head = head - p.q_heads;
        const int64_t row = (token * p.k_heads + kv_head) * p.no_rope_dim + first;
        const CopyUnit unit = load_unit(static_cast<const T*>(p.k_nope) + row);
        if (request < 0) continue;
        uint8_t* dst = k_nope_out + row;
        if (paged) {
          const CacheEntry& e = entry_of();
          dst = k_cache + e.base + kv_head * e.head_stride + p.rope_dim + first;
        }
        store_unit<T, kKind>(unit, dst, p.quant_scale_kv);
      }
      continue;
    }
    in_token -= nope_items;
    const int kv_head = static_cast<int>(in_token / launch.v_units);
    const int first = static_cast<int>(in_token - static_cast<int64_t>(kv_head) * launch.v_units) * kQuantVector;
    const CopyUnit unit = load_unit(static_cast<const T*>(p.v) + (token * p.k_heads + kv_head) * head_dim_of(p) + first);
    if (request < 0) continue;
    const CacheEntry& e = entry_of();
    store_unit<T, kKind>(unit, static_cast<uint8_t*>(p.v_cache) + e.base + kv_head * e.head_stride + first, p.quant_scale_kv);
  }
  pdl_launch_dependents();
}

template <class T, __nv_fp8_interpretation_t kKind>
cudaError_t launch_quantize_kind(const RopeQuantizeParams& p, cudaStream_t stream) {
  RopeQuantizeLaunch l{p, 1, 1, 0, 0, 0};
  l.rope_units = (p.interleave ? p.rope_dim : p.rope_dim / 2) / kQuantVector;
  l.nope_units = p.no_rope_dim / kQuantVector;
  l.v_units = is_paged(p) ? head_dim_of(p) / kQuantVector : 0;
  const int heads = p.q_heads + p.k_heads;
  const int64_t per_group = p.tokens * static_cast<int64_t>(l.rope_units);
  l.heads_per_group = heads_per_thread(per_group, heads);
  l.groups = (heads + l.heads_per_group - 1) / l.heads_per_group;
  const int64_t per_token = static_cast<int64_t>(l.groups) * l.rope_units + static_cast<int64_t>(heads) * l.nope_units +
                            static_cast<int64_t>(p.k_heads) * l.v_units;
  return launch_kernel(rope_quantize_kernel<T, kKind>, grid_for(p.tokens * per_token), dim3(kThreads), 0, stream,
                       p.enable_pdl, l);
}

template <class T>
cudaError_t launch_quantize_typed(const RopeQuantizeParams& p, cudaStream_t stream) {
  return p.quant_dtype == DType::fp8_e5m2 ? launch_quantize_kind<T, __NV_E5M2>(p, stream)
                                          : launch_quantize_kind<T, __NV_E4M3>(p, stream);
}

}  // namespace kbench::kernels::rope_detail
