// Where the FP8 RoPE kernel's threads work (rope_quantize_kernel.cuh), host and device alike: the
// CPU tests check this code (tests/cpu/rope/test_rope_quantize_layout.cpp).
//
// A slot is two 8-element vectors of one head of a token, half the head's part apart: elements
// [8u, 8u + 8) and [d/2 + 8u, d/2 + 8u + 8) of a part of d dims (two 16-byte loads, two 8-byte fp8
// stores), so that every slot moves the same bytes per token (NeoX rotation pairs are exactly such
// vectors; interleaved ones rotate each vector's own 4 pairs). A thread keeps its slot and walks the
// tokens. Slots of a token, in order:
//   rotation slots: q heads then k heads, rope_dim / 16 each, then idle slots up to a whole warp,
//     so that no warp both rotates and copies;
//   copy slots: q heads' then k heads' unrotated parts (no_rope_dim / 16 each), then, paged append
//     only, the k heads' V vectors (head_dim / 16 each), then idle slots up to a whole warp.
#pragma once

#include <algorithm>

#if defined(__CUDACC__)
#define KBENCH_ROPE_HD __host__ __device__ __forceinline__
#else
#define KBENCH_ROPE_HD inline
#endif

namespace kbench::kernels::rope_detail {

inline constexpr int kUnitElements = 8;  // one vector
inline constexpr int kSlotElements = 2 * kUnitElements;
inline constexpr int kWarpSlots = 32;

enum class SlotKind { q_rope, k_rope, q_nope, k_nope, v, idle };

struct SlotLayout {
  int q_heads = 0;
  int k_heads = 0;
  int rope_slots = 0;  // per head
  int nope_slots = 0;  // per head
  int v_slots = 0;     // per k head, paged append only (else 0)
  int copy_begin = 0;  // the first copy slot: the rotation slots rounded up to whole warps
  int slots = 0;       // per token, idle ones included (whole warps)
};

struct SlotUnit {
  SlotKind kind = SlotKind::idle;
  int head = 0;  // among the q heads or among the k heads
  int unit = 0;  // its vectors: elements 8 * unit and d/2 + 8 * unit of the head's part (d dims)
};

KBENCH_ROPE_HD int round_up_to_warp(int slots) { return (slots + kWarpSlots - 1) / kWarpSlots * kWarpSlots; }

KBENCH_ROPE_HD SlotLayout slot_layout(int q_heads, int k_heads, int rope_dim, int no_rope_dim, bool paged) {
  SlotLayout l;
  l.q_heads = q_heads;
  l.k_heads = k_heads;
  l.rope_slots = rope_dim / kSlotElements;
  l.nope_slots = no_rope_dim / kSlotElements;
  l.v_slots = paged ? (rope_dim + no_rope_dim) / kSlotElements : 0;
  l.copy_begin = round_up_to_warp((q_heads + k_heads) * l.rope_slots);
  l.slots = l.copy_begin + round_up_to_warp((q_heads + k_heads) * l.nope_slots + k_heads * l.v_slots);
  return l;
}

// What `slot` holds (32-bit divisions: once per thread).
KBENCH_ROPE_HD SlotUnit slot_unit(const SlotLayout& l, int slot) {
  const auto split = [](SlotKind kind, int index, int per_head) {
    const int head = index / per_head;
    return SlotUnit{kind, head, index - head * per_head};
  };
  const int rotation_slots = (l.q_heads + l.k_heads) * l.rope_slots;
  if (slot < rotation_slots) {
    const SlotUnit s = split(SlotKind::q_rope, slot, l.rope_slots);
    return s.head < l.q_heads ? s : SlotUnit{SlotKind::k_rope, s.head - l.q_heads, s.unit};
  }
  int index = slot - l.copy_begin;
  if (index < 0) return {};
  if (index < l.q_heads * l.nope_slots) return split(SlotKind::q_nope, index, l.nope_slots);
  index -= l.q_heads * l.nope_slots;
  if (index < l.k_heads * l.nope_slots) return split(SlotKind::k_nope, index, l.nope_slots);
  index -= l.k_heads * l.nope_slots;
  if (index < l.k_heads * l.v_slots) return split(SlotKind::v, index, l.v_slots);
  return {};
}

// Warps per CTA for `warps` warps of slots: all of them up to kMaxBlockWarps, else the count in
// [kMinBlockWarps, kMaxBlockWarps] that leaves the fewest idle warps in the last CTA (idle warps
// still hold their share of the SM), the larger on ties.
inline constexpr int kMinBlockWarps = 4;
inline constexpr int kMaxBlockWarps = 8;

inline int block_warps_for(int warps) {
  if (warps <= kMaxBlockWarps) return std::max(warps, 1);
  const auto idle = [warps](int block) { return (warps + block - 1) / block * block - warps; };
  int best = kMaxBlockWarps;
  for (int block = kMaxBlockWarps - 1; block >= kMinBlockWarps; --block) {
    if (idle(block) < idle(best)) best = block;
  }
  return best;
}

}  // namespace kbench::kernels::rope_detail
