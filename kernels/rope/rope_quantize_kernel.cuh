// The FP8 RoPE kernel (rope_quantize_fp8, mla_rope_quantize_fp8,
// rope_quantize_fp8_append_paged_kv_cache), templated on the input type and the fp8 format;
// included by one translation unit per input dtype. It reuses the rotation of rope_kernel.cuh (the
// cached angles, the NeoX and interleaved pair rotations in fp32) and only differs in what it
// stores: fp8 (scaled, round to nearest even, saturated) into separate rope/nope outputs or into the
// paged K/V caches.
//
// Slot-major (rope_quantize_layout.hpp): blockIdx.x and threadIdx.x pick a thread's slot, two
// 8-element vectors of one head of a token half the head's part apart, decoded once; blockIdx.y
// strides over the tokens, so the token loop only adds token strides. Adjacent threads take
// adjacent vectors: every 16-byte load and 8-byte fp8 store of a warp is part of whole 32-byte
// sectors. Every slot moves the same bytes per token, and rotation and copy slots are never in one
// warp. A thread takes kTokensPerStep tokens per step, all their loads issued before any store (the
// fill comes from those loads in flight and from occupancy: at most 64 registers, about half the
// SM's warps). The angles of a rotation slot come per token from the fp32 cache row (threads of
// other heads read the same row: L1 hits). Paged append: each thread storing K or V looks its
// token's cache entry up itself (request, then page; 32-bit arithmetic, 64-bit offsets), the
// request read with the data; padding tokens (negative batch index) store nothing. The grid is at
// most what stays resident and the token loop strides, so any size runs.
#pragma once

#include <cuda_fp8.h>


#include "kernels/common/fp8_pack.cuh"
#include "kernels/common/launch.hpp"
#include "kernels/rope/rope_kernel.cuh"
#include "kernels/rope/rope_quantize_layout.hpp"

namespace kbench::kernels::rope_detail {

__host__ __device__ __forceinline__ bool is_paged(const RopeQuantizeParams& p) { return p.k_cache != nullptr; }
__host__ __device__ __forceinline__ int head_dim_of(const RopeQuantizeParams& p) { return p.rope_dim + p.no_rope_dim; }

struct RopeQuantizeLaunch {
  RopeQuantizeParams p;
  SlotLayout layout;
  // Paged append: byte offsets in a cache of page p, entry e, K/V head h:
  // p * page_bytes + e * entry_stride + h * head_stride (NHD and HND alike).
  int64_t page_bytes = 0;
  int64_t entry_stride = 0;
  int64_t head_stride = 0;
};

// What a thread does for every token: its slot in token 0, the steps from token to token.
template <class T>
struct SlotPlan {
  const T* src = nullptr;     // the slot's first vector in token 0
  uint8_t* dst = nullptr;     // its first fp8 byte in token 0's output, or in a cache entry (to_cache)
  int src_token_stride = 0;   // elements
  int dst_token_stride = 0;   // bytes (outputs only: a cache entry is looked up per token)
  int half = 0;               // elements (and fp8 bytes) from the first vector to the second
  int first_pair = 0;         // rotation slots: the first vector's first pair, its cos/sin column
  float scale = 1.0f;
  bool to_cache = false;
};

template <class T>
__device__ __forceinline__ SlotPlan<T> slot_plan(const RopeQuantizeLaunch& l, const SlotUnit& u) {
  const RopeQuantizeParams& p = l.p;
  const int element = u.unit * kUnitElements;
  const int nope = p.no_rope_dim;
  SlotPlan<T> s;
  s.scale = u.kind == SlotKind::q_rope || u.kind == SlotKind::q_nope ? p.quant_scale_q : p.quant_scale_kv;
  s.first_pair = p.interleave ? element / 2 : element;
  // A cache slot: the K or V head vector of an entry at offset 0, then the element.
  const int64_t in_entry = u.head * l.head_stride + element;
  const auto output = [&](const void* in, void* out, int heads, int dim) {
    s.src = static_cast<const T*>(in) + u.head * dim + element;
    s.src_token_stride = heads * dim;
    s.dst = static_cast<uint8_t*>(out) + u.head * dim + element;
    s.dst_token_stride = heads * dim;
    s.half = dim / 2;
  };
  const auto cache = [&](const void* in, void* out, int dim, int64_t offset) {
    s.src = static_cast<const T*>(in) + u.head * dim + element;
    s.src_token_stride = p.k_heads * dim;
    s.dst = static_cast<uint8_t*>(out) + offset;
    s.half = dim / 2;
    s.to_cache = true;
  };
  switch (u.kind) {
    case SlotKind::q_rope: output(p.q_rope, p.q_rope_out, p.q_heads, p.rope_dim); break;
    case SlotKind::k_rope:
      if (is_paged(p)) {
        cache(p.k_rope, p.k_cache, p.rope_dim, in_entry);
      } else {
        output(p.k_rope, p.k_rope_out, p.k_heads, p.rope_dim);
      }
      break;
    case SlotKind::q_nope: output(p.q_nope, p.q_nope_out, p.q_heads, nope); break;
    case SlotKind::k_nope:
      if (is_paged(p)) {
        cache(p.k_nope, p.k_cache, nope, in_entry + p.rope_dim);
      } else {
        output(p.k_nope, p.k_nope_out, p.k_heads, nope);
      }
      break;
    case SlotKind::v: cache(p.v, p.v_cache, head_dim_of(p), in_entry); break;
    case SlotKind::idle: break;
  }
  return s;
}

// The byte offset of a paged-append token's cache entry: slot kv_indptr[request] * page_size +
// position is entry slot % page_size of page kv_indices[slot / page_size], in 32-bit arithmetic
// (floor division of the position alone: the same for every slot >= 0).
__device__ __forceinline__ int64_t cache_entry_offset(const RopeQuantizeLaunch& l, int32_t request, int32_t position) {
  const int page_size = l.p.page_size;
  int pages_in = position / page_size;
  int entry = position - pages_in * page_size;
  if (entry < 0) {
    entry += page_size;
    --pages_in;
  }
  const int32_t page = __ldg(l.p.kv_indices + __ldg(l.p.kv_indptr + request) + pages_in);
  return page * l.page_bytes + entry * l.entry_stride;
}

// 8 floats times `scale` as 8 fp8 bytes at dst (element 0 in the lowest byte).
template <__nv_fp8_interpretation_t kKind>
__device__ __forceinline__ void store_fp8(uint8_t* dst, const float* y, float scale) {
  *reinterpret_cast<uint2*>(dst) = fp8x8<kKind>(y, scale);
}

enum class SlotMath { copy, interleaved, neox };

static_assert(kUnitElements == kVector, "a slot's vector is one 16-byte load of rope_kernel.cuh's rotations");

// Tokens per step: the loads in flight per thread. More spill at 64 registers (interleaved slots:
// 2 tokens, with four angle vectors each; copy slots: 4 tokens).
template <SlotMath kMath>
inline constexpr int kTokensPerStep = kMath == SlotMath::interleaved ? 1 : 2;

// The thread's slot for every token of its CTA row.
template <SlotMath kMath, class T, __nv_fp8_interpretation_t kKind>
__device__ __forceinline__ void quantize_slot(const RopeQuantizeLaunch& l, const SlotPlan<T>& s) {
  constexpr int kTokens = kTokensPerStep<kMath>;
  const RopeQuantizeParams& p = l.p;
  const bool paged = is_paged(p);
  for (int64_t first = static_cast<int64_t>(blockIdx.y) * kTokens; first < p.tokens;
       first += static_cast<int64_t>(gridDim.y) * kTokens) {
    uint4 low[kTokens];
    uint4 high[kTokens];
    int32_t row[kTokens];       // rotation slots: the token's cos/sin row
    int32_t position[kTokens];  // cache slots: the token's position in its request
    int32_t request[kTokens];   // paged append: the batch index (negative: padding)
#pragma unroll
    for (int i = 0; i < kTokens; ++i) {
      const int64_t token = first + i;
      if (token >= p.tokens) break;
      const T* src = s.src + token * s.src_token_stride;
      low[i] = __ldg(reinterpret_cast<const uint4*>(src));
      high[i] = __ldg(reinterpret_cast<const uint4*>(src + s.half));
      if constexpr (kMath != SlotMath::copy) row[i] = __ldg(p.pos_ids + token);
      if (s.to_cache) position[i] = __ldg(p.positions + token);
      request[i] = paged ? __ldg(p.batch_indices + token) : 0;
    }
#pragma unroll
    for (int i = 0; i < kTokens; ++i) {
      const int64_t token = first + i;
      if (token >= p.tokens) break;
      if (request[i] < 0) continue;  // padding: nothing of the token is stored, as FlashInfer does
      uint8_t* dst = s.to_cache ? s.dst + cache_entry_offset(l, request[i], position[i]) : s.dst + token * s.dst_token_stride;
      float y_low[kUnitElements];
      float y_high[kUnitElements];
      if constexpr (kMath == SlotMath::copy) {
        to_floats<T>(low[i], y_low);
        to_floats<T>(high[i], y_high);
      } else if constexpr (kMath == SlotMath::interleaved) {
        // Each vector's own 4 pairs: the second vector's pairs start rope_dim / 4 pairs further on.
        const UnitRotation r_low = cached_unit_rotation(p.cos_sin_cache, p.rope_dim, row[i], s.first_pair, kUnitElements / 2);
        const UnitRotation r_high =
            cached_unit_rotation(p.cos_sin_cache, p.rope_dim, row[i], s.first_pair + p.rope_dim / 4, kUnitElements / 2);
        interleaved_rotated<T>(low[i], r_low.pair, y_low);
        interleaved_rotated<T>(high[i], r_high.pair, y_high);
      } else {
        const UnitRotation r = cached_unit_rotation(p.cos_sin_cache, p.rope_dim, row[i], s.first_pair, kUnitElements);
        neox_rotated<T>(low[i], high[i], r.pair, y_low, y_high);
      }
      store_fp8<kKind>(dst, y_low, s.scale);
      store_fp8<kKind>(dst + s.half, y_high, s.scale);
    }
  }
}

// 256 threads at most, 4 CTAs of them per SM: at most 64 registers.
inline constexpr int kQuantMaxThreads = kMaxBlockWarps * kWarpSlots;

template <class T, __nv_fp8_interpretation_t kKind>
__global__ void __launch_bounds__(kQuantMaxThreads, 4) rope_quantize_kernel(RopeQuantizeLaunch launch) {
  pdl_wait();
  const SlotUnit unit = slot_unit(launch.layout, static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x));
  if (unit.kind != SlotKind::idle) {
    const SlotPlan<T> plan = slot_plan<T>(launch, unit);
    if (unit.kind == SlotKind::q_rope || unit.kind == SlotKind::k_rope) {
      if (launch.p.interleave) {
        quantize_slot<SlotMath::interleaved, T, kKind>(launch, plan);
      } else {
        quantize_slot<SlotMath::neox, T, kKind>(launch, plan);
      }
    } else {
      quantize_slot<SlotMath::copy, T, kKind>(launch, plan);
    }
  }
  pdl_launch_dependents();
}

// CTAs of `block_warps` warps of this kernel resident per SM, queried once per device and size.
template <class T, __nv_fp8_interpretation_t kKind>
int resident_blocks_per_sm(int block_warps) {
  static DeviceMemo<int> memo[kMaxBlockWarps + 1];
  int blocks = 0;
  const auto query = [block_warps](int, int* value) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(value, rope_quantize_kernel<T, kKind>, block_warps * kWarpSlots, 0);
  };
  if (memo_per_device(memo[block_warps], query, &blocks) != cudaSuccess || blocks <= 0) {
    (void)cudaGetLastError();
    return 1;
  }
  return blocks;
}

template <class T, __nv_fp8_interpretation_t kKind>
cudaError_t launch_quantize_kind(const RopeQuantizeParams& p, cudaStream_t stream) {
  RopeQuantizeLaunch l;
  l.p = p;
  l.layout = slot_layout(p.q_heads, p.k_heads, p.rope_dim, p.no_rope_dim, is_paged(p));
  if (is_paged(p)) {
    const int64_t head_dim = head_dim_of(p);
    l.page_bytes = static_cast<int64_t>(p.page_size) * p.k_heads * head_dim;
    l.entry_stride = p.hnd ? head_dim : p.k_heads * head_dim;
    l.head_stride = p.hnd ? p.page_size * head_dim : head_dim;
  }
  const int warps = l.layout.slots / kWarpSlots;
  const int block_warps = block_warps_for(warps);
  const int slot_blocks = (warps + block_warps - 1) / block_warps;
  // Rows of CTAs over the tokens: as many as stay resident beside each other, one token each at least.
  const int64_t resident = static_cast<int64_t>(resident_blocks_per_sm<T, kKind>(block_warps)) * current_sm_count();
  const int64_t rows = std::clamp<int64_t>(resident / slot_blocks, 1, std::min<int64_t>(p.tokens, 65535));
  return launch_kernel(rope_quantize_kernel<T, kKind>, dim3(static_cast<unsigned>(slot_blocks), static_cast<unsigned>(rows)),
                       dim3(static_cast<unsigned>(block_warps * kWarpSlots)), 0, stream, p.enable_pdl, l);
}

template <class T>
cudaError_t launch_quantize_typed(const RopeQuantizeParams& p, cudaStream_t stream) {
  return p.quant_dtype == DType::fp8_e5m2 ? launch_quantize_kind<T, __NV_E5M2>(p, stream)
                                          : launch_quantize_kind<T, __NV_E4M3>(p, stream);
}

}  // namespace kbench::kernels::rope_detail
