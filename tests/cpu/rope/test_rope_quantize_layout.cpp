// Where the FP8 RoPE kernel's threads work (kernels/rope/rope_quantize_layout.hpp, the code the
// kernel runs): every unit of every tensor taken by exactly one slot, no warp both rotating and
// copying, and the CTA sizes.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include "kernels/rope/rope_quantize_layout.hpp"

namespace kbench {
namespace {

namespace rd = kernels::rope_detail;

struct Shape {
  int q_heads;
  int k_heads;
  int rope_dim;
  int no_rope_dim;
  bool paged;

  [[nodiscard]] std::string describe() const {
    std::ostringstream s;
    s << "heads " << q_heads << "/" << k_heads << ", rope " << rope_dim << " nope " << no_rope_dim
      << (paged ? " paged" : "");
    return s.str();
  }
};

bool rotates(rd::SlotKind kind) { return kind == rd::SlotKind::q_rope || kind == rd::SlotKind::k_rope; }

TEST(RopeQuantizeLayout, EveryUnitHasExactlyOneSlot) {
  const Shape shapes[] = {
      {32, 8, 128, 0, true},    // the paged append's benchmark
      {128, 1, 128, 64, false},  // MLA, the sample line
      {16, 1, 64, 512, false},   // MLA, DeepSeek
      {5, 3, 64, 64, true},      // partial rotary dim
      {7, 3, 64, 48, false},     // odd heads
      {3, 5, 48, 16, false},     // rope 48: three slots a head; nope 16: one
      {1, 1, 32, 0, false},      // two slots per token
  };
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.describe());
    const rd::SlotLayout l = rd::slot_layout(s.q_heads, s.k_heads, s.rope_dim, s.no_rope_dim, s.paged);
    EXPECT_EQ(l.slots % rd::kWarpSlots, 0);
    std::map<std::tuple<rd::SlotKind, int, int>, int> taken;
    for (int slot = 0; slot < l.slots + 2 * rd::kWarpSlots; ++slot) {  // beyond the last warp too: idle
      const rd::SlotUnit u = rd::slot_unit(l, slot);
      if (slot >= l.slots) {
        EXPECT_EQ(u.kind, rd::SlotKind::idle) << slot;
      }
      if (u.kind != rd::SlotKind::idle) ++taken[{u.kind, u.head, u.unit}];
      const rd::SlotUnit warp_first = rd::slot_unit(l, slot / rd::kWarpSlots * rd::kWarpSlots);
      if (u.kind != rd::SlotKind::idle && warp_first.kind != rd::SlotKind::idle) {
        EXPECT_EQ(rotates(u.kind), rotates(warp_first.kind)) << "slot " << slot << " shares a warp with other work";
      }
    }
    // Two 8-element vectors per slot.
    const int rope_slots = s.rope_dim / 16;
    const int nope_slots = s.no_rope_dim / 16;
    const int v_slots = s.paged ? (s.rope_dim + s.no_rope_dim) / 16 : 0;
    std::map<std::tuple<rd::SlotKind, int, int>, int> expected;
    const auto expect = [&](rd::SlotKind kind, int heads, int per_head) {
      for (int head = 0; head < heads; ++head) {
        for (int unit = 0; unit < per_head; ++unit) expected[{kind, head, unit}] = 1;
      }
    };
    expect(rd::SlotKind::q_rope, s.q_heads, rope_slots);
    expect(rd::SlotKind::k_rope, s.k_heads, rope_slots);
    expect(rd::SlotKind::q_nope, s.q_heads, nope_slots);
    expect(rd::SlotKind::k_nope, s.k_heads, nope_slots);
    expect(rd::SlotKind::v, s.k_heads, v_slots);
    EXPECT_EQ(taken, expected);
  }
}

TEST(RopeQuantizeLayout, CtasLeaveFewIdleWarps) {
  for (int warps = 1; warps <= rd::kMaxBlockWarps; ++warps) EXPECT_EQ(rd::block_warps_for(warps), warps);
  EXPECT_EQ(rd::block_warps_for(12), 6);  // the paged append's benchmark: 10 rotation warps, 2 of V
  EXPECT_EQ(rd::block_warps_for(50), 5);  // MLA 128 heads: 33 rotation warps, 17 copy warps
  EXPECT_EQ(rd::block_warps_for(9), 5);   // 1 idle warp (8 would leave 7)
  EXPECT_EQ(rd::block_warps_for(16), 8);  // ties: the larger CTA
  for (int warps = rd::kMaxBlockWarps + 1; warps < 300; ++warps) {
    const int block = rd::block_warps_for(warps);
    EXPECT_GE(block, rd::kMinBlockWarps);
    EXPECT_LE(block, rd::kMaxBlockWarps);
    const auto idle = [warps](int b) { return (warps + b - 1) / b * b - warps; };
    for (int other = rd::kMinBlockWarps; other <= rd::kMaxBlockWarps; ++other) EXPECT_LE(idle(block), idle(other)) << warps;
  }
}

}  // namespace
}  // namespace kbench
