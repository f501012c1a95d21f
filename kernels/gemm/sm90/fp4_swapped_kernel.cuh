// kbench's swapped FP4 GEMM for sm_90a: weight_fp4 (wgmma_gemm.hpp: D = group_alpha[g] A B_g^T, A
// bf16 or fp16 [rows][k], B_g NVFP4 or MXFP4 codes [n][k] with swizzled_128x4 scale bytes) where the
// groups hold a few rows each: an MoE's experts at decode (DeepSeek-V3 at 128 tokens: 4 rows an
// expert). The tiled kernel (wgmma_gemm_kernel.cuh) puts those few rows on wgmma's M (64, mostly
// padding) and its converter warpgroups expand every weight into a 16-bit stage in shared memory
// before wgmma reads it: FP4 weights at ~1.0 TB/s on an H200, bound by the converters (session 43).
// Here the operands swap, D^T = B_g A^T: the weights' rows are wgmma's M and the group's rows (16 or
// 64 at a time) its N, and each consumer thread expands its own weight rows' codes straight into wgmma's A
// fragments (registers): no 16-bit stage, no converter, no proxy fence between them (session 45:
// the NVFP4 DeepSeek-V3 layer at 128 tokens 1.96x, ~2.35 TB/s of FP4 weights; 1.43-1.45x from 512
// to 4096 tokens with 64 rows a unit; H200).
//
// A unit is 256 weight rows x kRows (16 or 64) rows of one group over all of k (units group by
// group, each group's kRows-row blocks in turn, each block's weight blocks in turn: the CTAs running
// together share the group's A rows in L2); a group of more than kRows rows reads its weights once
// per block. CTA c takes units c, c + grid, ... (equal work each). Warpgroup 0's thread 0 loads each
// 256-deep stage (TMA: 256 weight rows x 128 bytes of codes, 128-byte swizzle; A's kRows rows in four
// 64-wide chunks, 128-byte swizzle, the layout wgmma's B descriptor reads; the stage's scale bytes,
// one bulk copy per 128-row tile of the swizzled_128x4 layout, whose 4-column tiles lie
// consecutively) into a ring of kStages; 16 rows a unit: four consumer warpgroups of 64 weight rows
// (640 threads), one m64n16 accumulator each; 64 rows: two of 128 rows, two m64n64 each (their
// accumulators need the registers of 384 threads).
//
// A fragments: wgmma's m64k16 A fragment gives thread (warp, lane) rows 16 warp + lane / 4 (+ 8) and
// k 2 q, 2 q + 1 (+ 8), q = lane % 4: in FP4 codes (element 2 j in byte j's low nibble) bytes q and
// q + 4 of the row's 8-byte block of 16 k. A thread loads its row's 16-byte chunk (32 k: two
// k-steps, every lane of the quad the same chunk, a broadcast), byte-permutes byte q of words 0 and 2
// (resp. 1 and 3) into one register and expands both nibbles of the pair at once (fp4_pair_bits: the
// two k-steps' k 2 q, resp. 2 q + 1), times the two blocks' scale factors as one 16-bit pair (NVFP4:
// blocks 2 u and 2 u + 1 of chunk u; MXFP4: chunk u is one block), and byte-permutes the results into
// the two k-steps' registers: 22 instructions a row's chunk (8 of its codes a thread). Exact as
// fp4_expand.hpp says; the epilogue multiplies by the group's alpha and 2^kFp4OperandExponent.
//
// One instantiation a translation unit: fp4_swapped_{bf16,fp16}_{16,64}.cu (the operand type and
// rows a unit; the format a branch at the top). The plan (wgmma_gemm_launch.cu) takes this kernel where
// wgmma_gemm_swapped_fp4_rows says so, with 16 or 64 rows of A a unit (SwappedConfig).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <cute/arch/mma_sm90.hpp>

#include "kernels/common/fp8_pack.cuh"
#include "kernels/common/hopper.cuh"
#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"
#include "kernels/gemm/sm90/device_groups.cuh"
#include "kernels/gemm/sm90/fp4_expand.hpp"
#include "kernels/gemm/sm90/wgmma_gemm.hpp"
#include "kernels/gemm/sm90/wgmma_gemm_args.hpp"

namespace kbench::kernels::gemm::sm90 {

namespace fp4_swapped {

constexpr int kWeightRows = 256;  // B's rows of a unit
constexpr int kStageK = 256;      // k of a stage: 128 bytes of codes a weight row
constexpr int kWBytes = kWeightRows * kStageK / 2;
constexpr int kSfTileBytes = 512;  // swizzled_128x4: 128 rows x 4 scale columns
constexpr int kSfBytes = 2 * (kStageK / 16 / 4) * kSfTileBytes;  // two row tiles of NVFP4's 16 columns (MXFP4: 8)
constexpr int kSmemLimit = 227 * 1024;

// The kernel for kRows of A a unit (wgmma's N): 16 (decode: four consumer warpgroups of 64 weight
// rows; MXFP4 1.23x two of 128, NVFP4 0.99x, session 45 call 2) or 64 (two of 128 rows, whose
// 64-wide accumulators need the registers).
template <int kRows_>
struct SwappedConfig {
  static constexpr int kRows = kRows_;
  static constexpr int kConsumers = kRows == 16 ? 4 : 2;
  static constexpr int kConsumerRows = kWeightRows / kConsumers;  // each in kRowBlocks wgmma M of 64
  static constexpr int kRowBlocks = kConsumerRows / 64;
  static constexpr int kConsumerThreads = 128 * kConsumers;
  static constexpr int kThreads = 128 + kConsumerThreads;
  static constexpr int kAccRegs = kRows / 2;  // an m64 x kRows fp32 accumulator's, a thread
  static constexpr int kAChunkBytes = kRows * 128;  // 64 k of A's rows, one 128-byte swizzled row each
  static constexpr int kABytes = kStageK / 64 * kAChunkBytes;
  static constexpr int kStageBytes = kWBytes + kABytes + kSfBytes;
  static constexpr int kGroupBytes = 2 * 4 * (kMaxDeviceGroups + 1);  // row offsets, unit prefix
  static constexpr int kStages = std::min(4, (kSmemLimit - kGroupBytes - 64) / kStageBytes);
  static constexpr int kBarOffset = kStages * kStageBytes;  // full[stage], then empty[stage]
  static constexpr int kGroupOffset = kBarOffset + 16 * kStages;
  static constexpr int kSmemBytes = kGroupOffset + kGroupBytes;
  // setmaxnreg within the launch's registers (65536 / kThreads a thread, in multiples of 8).
  static constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;
  static constexpr int kProducerRegs = kConsumers == 2 ? 40 : 24;
  static constexpr int kConsumerRegs = (kLaunchRegs * kThreads - 128 * kProducerRegs) / kConsumerThreads / 8 * 8;
  static_assert(kRows == 16 || kRows == 64, "wgmma N");
  static_assert(kStageBytes % 1024 == 0 && kWBytes % 1024 == 0 && kAChunkBytes % 1024 == 0, "swizzle atoms");
  static_assert(kStages >= 3 && kSmemBytes <= kSmemLimit, "shared memory per block");
  static_assert(128 * kProducerRegs + kConsumerThreads * kConsumerRegs <= kLaunchRegs * kThreads, "register pool");
  static_assert(kConsumerRows == 64 || kConsumerRows == 128, "a consumer's rows in one 128-row scale tile");
};

// Scale column tiles of a stage: 256 k in blocks of 16 (NVFP4) or 32 (MXFP4), 4 columns a tile.
template <quant::BlockFormat kFormat>
inline constexpr int kColumnTiles = kStageK / (kFormat == quant::BlockFormat::nvfp4 ? 16 : 32) / 4;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// A unit: its group, the group's rows [row_begin, row_end) (at most kRows) and B's rows from w0.
struct SwappedUnit {
  int group;
  int row_begin;
  int row_end;
  int w0;
};

// The units in order: group by group, each group's kRows-row blocks, each block's weight blocks.
// Equal groups by arithmetic; device groups by their row offsets and unit prefix in shared memory.
template <class Cfg>
struct SwappedUnits {
  static constexpr int kRows = Cfg::kRows;
  const int* group_rows;  // device groups: [groups + 1]
  const int* prefix;      // device groups: units before group g, [groups + 1]
  int groups;
  int rows_per_group;  // > 0: equal groups
  int w_blocks;
  int total;

  [[nodiscard]] __device__ SwappedUnit at(int u) const {
    int group, first_row, end_row, local;
    if (rows_per_group > 0) {
      const int per_group = (rows_per_group + kRows - 1) / kRows * w_blocks;
      group = u / per_group;
      local = u - group * per_group;
      first_row = group * rows_per_group;
      end_row = first_row + rows_per_group;
    } else {
      int lo = 0, hi = groups;  // prefix[lo] <= u < prefix[hi]: the largest such lo has units
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (prefix[mid] <= u) lo = mid;
        else hi = mid;
      }
      group = lo;
      local = u - prefix[lo];
      first_row = group_rows[lo];
      end_row = group_rows[lo + 1];
    }
    const int block = local / w_blocks;
    SwappedUnit unit;
    unit.group = group;
    unit.row_begin = first_row + kRows * block;
    unit.row_end = min(unit.row_begin + kRows, end_row);
    unit.w0 = kWeightRows * (local - block * w_blocks);
    return unit;
  }
};

// The unit map: equal groups by arithmetic; device groups' row offsets and unit prefix staged in
// shared memory (stage_group_prefix). Every thread returns the same map (after a block barrier).
template <class Cfg>
__device__ SwappedUnits<Cfg> stage_units(const WgmmaGemmArgs& args, uint8_t* smem_raw, int tid) {
  constexpr int kRows = Cfg::kRows;
  int* group_rows = reinterpret_cast<int*>(smem_raw + Cfg::kGroupOffset);
  int* prefix = group_rows + kMaxDeviceGroups + 1;
  SwappedUnits<Cfg> units{group_rows, prefix, args.groups, args.rows_per_group, (args.n + kWeightRows - 1) / kWeightRows, 0};
  if (args.rows_per_group > 0) {
    __syncthreads();  // the barriers' initialisation
    units.total = args.groups * ((args.rows_per_group + kRows - 1) / kRows) * units.w_blocks;
    return units;
  }
  units.total = stage_group_prefix(args, group_rows, prefix, Cfg::kThreads, tid, [&units](int rows) {
    return (rows + kRows - 1) / kRows * units.w_blocks;
  });
  return units;
}

template <class Cfg>
__device__ __forceinline__ uint32_t full_bar(uint32_t smem, uint32_t stage) {
  return smem + Cfg::kBarOffset + 8 * stage;
}
template <class Cfg>
__device__ __forceinline__ uint32_t empty_bar(uint32_t smem, uint32_t stage) {
  return smem + Cfg::kBarOffset + 8 * (Cfg::kStages + stage);
}

// Thread 0 of the producer warpgroup: every unit's stages into the ring.
template <class Cfg, quant::BlockFormat kFormat>
__device__ void produce(const WgmmaGemmArgs& args, const SwappedUnits<Cfg>& units, uint32_t smem) {
  constexpr int kTiles = kColumnTiles<kFormat>;
  constexpr int kStages = Cfg::kStages, kABytes = Cfg::kABytes, kAChunkBytes = Cfg::kAChunkBytes;
  const int64_t tiles_per_row = (args.sf_columns + 3) / 4;  // the layout's column tiles of a 128-row tile
  uint32_t it = 0;
  for (int u = static_cast<int>(blockIdx.x); u < units.total; u += static_cast<int>(gridDim.x)) {
    const SwappedUnit unit = units.at(u);
    const int row_tiles = unit.w0 + 128 < args.n ? 2 : 1;  // a last block of 128 rows loads one
    const uint8_t* sf = args.b_block_scales + unit.group * args.b_sf_group_stride +
                        unit.w0 / 128 * tiles_per_row * kSfTileBytes;
    const uint32_t bytes = kWBytes + kABytes + row_tiles * kTiles * kSfTileBytes;
    for (int s = 0; s < args.k_blocks; ++s, ++it) {
      const uint32_t stage = it % kStages;
      const uint32_t base = smem + stage * Cfg::kStageBytes;
      const uint32_t full = full_bar<Cfg>(smem, stage);
      hopper::mbar_wait(empty_bar<Cfg>(smem, stage), ((it / kStages) & 1) ^ 1);
      hopper::mbar_arrive_expect_tx(full, bytes);
      hopper::tma_load_3d(base, &args.tma_b, full, s * 128, unit.w0, unit.group);
#pragma unroll
      for (int c = 0; c < kStageK / 64; ++c) {
        hopper::tma_load_2d(base + kWBytes + c * kAChunkBytes, &args.tma_a, full, (kStageK / 64 * s + c) * 128,
                            unit.row_begin);
      }
      for (int t = 0; t < row_tiles; ++t) {
        hopper::bulk_load(base + kWBytes + kABytes + t * kTiles * kSfTileBytes,
                          sf + (t * tiles_per_row + s * kTiles) * kSfTileBytes, kTiles * kSfTileBytes, full);
      }
    }
  }
}

template <DType kOperand>
__device__ __forceinline__ uint32_t mul2(uint32_t a, uint32_t b) {
  uint32_t product;
  if constexpr (kOperand == DType::bfloat16) {
    asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(product) : "r"(a), "r"(b));
  } else {
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(product) : "r"(a), "r"(b));
  }
  return product;
}

// An NVFP4 scale pair (f16x2 of two e4m3 scales) as the 16-bit factors' pair (fp4_scale_bits).
template <DType kOperand>
__device__ __forceinline__ uint32_t nvfp4_factor_pair(uint32_t f16_pair) {
  if constexpr (kOperand == DType::float16) {
    return f16_pair;
  } else {
    const float lo = __half2float(__ushort_as_half(static_cast<unsigned short>(f16_pair & 0xFFFFu))) * 0x1p94f;
    const float hi = __half2float(__ushort_as_half(static_cast<unsigned short>(f16_pair >> 16))) * 0x1p94f;
    return __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);
  }
}

// Row chunk `v` (16 bytes of codes: two 16-k blocks) times `factors` (the first block's factor in
// the low half, the second's in the high half) into the A fragment registers of its two k-steps:
// step0[0] k 2 q, 2 q + 1 and step0[1] k 2 q + 8, 2 q + 9 of the first block; step1 the second's.
// `sel` picks byte q of two words into bytes 0 and 2.
template <DType kOperand>
__device__ __forceinline__ void expand_chunk(uint4 v, uint32_t factors, uint32_t sel, uint32_t (&step0)[2],
                                             uint32_t (&step1)[2]) {
  const uint32_t words[2] = {__byte_perm(v.x, v.z, sel), __byte_perm(v.y, v.w, sel)};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t lo = mul2<kOperand>(fp4_pair_bits<kOperand>(words[h], 0), factors);  // even k of both blocks
    const uint32_t hi = mul2<kOperand>(fp4_pair_bits<kOperand>(words[h], 1), factors);  // odd k
    step0[h] = __byte_perm(lo, hi, 0x5410);
    step1[h] = __byte_perm(lo, hi, 0x7632);
  }
}

// Consumer warpgroup wg's part of one stage: weight rows kConsumerRows wg + 64 mb + 16 warp + lane / 4
// (+ 8) of each of its kRowBlocks blocks mb, 8 chunks of 32 k each, one wgmma group (two k-steps) a
// chunk and mb. A group's codes are loaded before the group before is expanded, and its fragments
// made while the group before runs; the stage's scale words are loaded first.
template <class Cfg, DType kOperand, quant::BlockFormat kFormat>
__device__ __forceinline__ void consume_stage(uint32_t stage_base, const uint8_t* stage_ptr, int wg, int warp,
                                              int lane, float (&acc)[Cfg::kRowBlocks][Cfg::kAccRegs]) {
  using Elem = std::conditional_t<kOperand == DType::bfloat16, cute::bfloat16_t, cute::half_t>;
  using Op = decltype(cute::SM90::GMMA::rs_op_selector<Elem, Elem, float,
                                                       cute::Shape<cute::_64, cute::Int<Cfg::kRows>, cute::_16>,
                                                       cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::K>());
  constexpr int kRowBlocks = Cfg::kRowBlocks, kConsumerRows = Cfg::kConsumerRows, kAccRegs = Cfg::kAccRegs;
  constexpr int kABytes = Cfg::kABytes, kAChunkBytes = Cfg::kAChunkBytes;
  constexpr int kTiles = kColumnTiles<kFormat>;
  constexpr int kGroups = 8 * kRowBlocks;
  const int q = lane % 4;
  const uint32_t sel = static_cast<uint32_t>(q) * 0x11u + static_cast<uint32_t>(q + 4) * 0x1100u;
  const uint32_t a_base = stage_base + kWBytes;
  const int first_row = kConsumerRows * wg;  // of the unit's 256
  const uint8_t* sf = stage_ptr + kWBytes + kABytes + first_row / 128 * kTiles * kSfTileBytes;
  // The thread's rows' scale words of one column tile (4 blocks) [mb][h]: tile t + 1's loaded as
  // tile t's are taken.
  const auto load_words = [&](int tile, uint32_t (&w)[kRowBlocks][2]) {
#pragma unroll
    for (int mb = 0; mb < kRowBlocks; ++mb) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = first_row % 128 + 64 * mb + 16 * warp + lane / 4 + 8 * h;  // within its 128-row tile
        w[mb][h] = *reinterpret_cast<const uint32_t*>(sf + tile * kSfTileBytes + (row % 32) * 16 + (row / 32) * 4);
      }
    }
  };
  constexpr int kChunksPerTile = 8 / kTiles;
  uint32_t words[kRowBlocks][2], next_words[kRowBlocks][2];
  load_words(0, next_words);
  const auto load_codes = [&](int group, uint4 (&v)[2]) {
    const int u = group / kRowBlocks, mb = group % kRowBlocks;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = first_row + 64 * mb + 16 * warp + lane / 4 + 8 * h;
      v[h] = *reinterpret_cast<const uint4*>(stage_ptr + row * 128 + ((u ^ (lane / 4)) << 4));
    }
  };
  uint32_t frag[2][8];
  uint32_t next[kRowBlocks][2];  // NVFP4: chunk u + 1's factors [mb][h], made with chunk u's
  uint4 codes[2];
  load_codes(0, codes);
#pragma unroll
  for (int group = 0; group < kGroups; ++group) {
    const int u = group / kRowBlocks, mb = group % kRowBlocks;
    const uint4 v[2] = {codes[0], codes[1]};
    if (group + 1 < kGroups) load_codes(group + 1, codes);
    if (u % kChunksPerTile == 0 && mb == 0) {
#pragma unroll
      for (int i = 0; i < kRowBlocks; ++i) {
        words[i][0] = next_words[i][0];
        words[i][1] = next_words[i][1];
      }
      if (u / kChunksPerTile + 1 < kTiles) load_words(u / kChunksPerTile + 1, next_words);
    }
    uint32_t factors[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if constexpr (kFormat == quant::BlockFormat::nvfp4) {  // blocks 2 u, 2 u + 1: bytes 2 (u % 2) ..
        if (u % 2 == 0) {
          uint32_t pair01, pair23;
          fp8x4_to_f16<true>(words[mb][h], pair01, pair23);
          factors[h] = nvfp4_factor_pair<kOperand>(pair01);
          next[mb][h] = nvfp4_factor_pair<kOperand>(pair23);
        } else {
          factors[h] = next[mb][h];
        }
      } else {  // block u: byte u % 4 of tile u / 4
        const uint32_t factor = fp4_scale_bits<kOperand, quant::BlockFormat::mxfp4>(
            static_cast<uint8_t>(words[mb][h] >> (8 * (u % 4))));
        factors[h] = factor | (factor << 16);
      }
    }
    uint32_t step0[2][2], step1[2][2];  // [h]
#pragma unroll
    for (int h = 0; h < 2; ++h) expand_chunk<kOperand>(v[h], factors[h], sel, step0[h], step1[h]);
    if (group >= 2) hopper::wgmma_wait<1>();  // the group that read frag[group % 2] is done
    uint32_t(&f)[8] = frag[group % 2];
    f[0] = step0[0][0];
    f[1] = step0[1][0];
    f[2] = step0[0][1];
    f[3] = step0[1][1];
    f[4] = step1[0][0];
    f[5] = step1[1][0];
    f[6] = step1[0][1];
    f[7] = step1[1][1];
    hopper::wgmma_fence();
    // A's k-steps 2 (u % 2) and + 1 of its 64-wide chunk u / 2 (32 bytes a k-step).
    const uint64_t b = hopper::smem_desc(a_base + (u / 2) * kAChunkBytes, 16, 1024) + ((64 * (u % 2)) >> 4);
    hopper::gmma_rs<Op>(f[0], f[1], f[2], f[3], b, acc[mb], std::make_index_sequence<kAccRegs>{});
    hopper::gmma_rs<Op>(f[4], f[5], f[6], f[7], b + 2, acc[mb], std::make_index_sequence<kAccRegs>{});
    hopper::wgmma_commit();
  }
  hopper::wgmma_wait<0>();
#pragma unroll
  for (int mb = 0; mb < kRowBlocks; ++mb) hopper::fence_regs(acc[mb]);
}

// Consumer warpgroup wg of every unit: its stages, then D's rows of the unit's group (16-bit stores
// straight from the accumulators: D is a few MB where B is GBs). A warpgroup whose rows lie past n
// (a last block of 128) only passes its stages on.
template <class Cfg, DType kOperand, quant::BlockFormat kFormat>
__device__ void consume(const WgmmaGemmArgs& args, const SwappedUnits<Cfg>& units, const uint8_t* smem_raw,
                        uint32_t smem, int wg, int t) {
  constexpr int kRowBlocks = Cfg::kRowBlocks, kConsumerRows = Cfg::kConsumerRows, kAccRegs = Cfg::kAccRegs;
  constexpr int kStages = Cfg::kStages;
  const int warp = t / 32, lane = t % 32;
  uint32_t it = 0;
  for (int u = static_cast<int>(blockIdx.x); u < units.total; u += static_cast<int>(gridDim.x)) {
    const SwappedUnit unit = units.at(u);
    const bool active = unit.w0 + kConsumerRows * wg < args.n;
    float acc[kRowBlocks][kAccRegs];
#pragma unroll
    for (int mb = 0; mb < kRowBlocks; ++mb) {
#pragma unroll
      for (int i = 0; i < kAccRegs; ++i) acc[mb][i] = 0.0f;
    }
    for (int s = 0; s < args.k_blocks; ++s, ++it) {
      const uint32_t stage = it % kStages;
      hopper::mbar_wait(full_bar<Cfg>(smem, stage), (it / kStages) & 1);
      if (active) {
        consume_stage<Cfg, kOperand, kFormat>(smem + stage * Cfg::kStageBytes, smem_raw + stage * Cfg::kStageBytes, wg,
                                              warp, lane, acc);
      }
      hopper::fence_proxy_async();  // this thread's reads of the codes and scales before the refill's TMA writes
      hopper::mbar_arrive(empty_bar<Cfg>(smem, stage));
    }
    if (!active) continue;
    // acc[mb][i]: weight row (D's column) 64 mb + 16 warp + lane / 4 + 8 ((i / 2) % 2) of the
    // warpgroup's, the group's row 8 (i / 4) + 2 (lane % 4) + i % 2.
    const float scale =
        (args.group_alpha != nullptr ? __ldg(args.group_alpha + unit.group) : 1.0f) * fp4_operand_unscale<kOperand>();
#pragma unroll
    for (int mb = 0; mb < kRowBlocks; ++mb) {
#pragma unroll
      for (int i = 0; i < kAccRegs; ++i) {
        const int row = unit.row_begin + 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        const int column = unit.w0 + kConsumerRows * wg + 64 * mb + 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
        if (row < unit.row_end && column < args.n) {
          const float x = acc[mb][i] * scale;
          const uint16_t bits = args.d_bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x))
                                            : __half_as_ushort(__float2half_rn(x));
          static_cast<uint16_t*>(args.d)[static_cast<int64_t>(row) * args.n + column] = bits;
        }
      }
    }
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <DType kOperand, int kRows>
__global__ void __launch_bounds__(SwappedConfig<kRows>::kThreads, 1)
    fp4_swapped_kernel(const __grid_constant__ WgmmaGemmArgs args) {
  using Cfg = SwappedConfig<kRows>;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t smem = hopper::smem_addr(smem_raw);
  if ((smem & 1023) != 0) __trap();  // the swizzle atoms and descriptors assume it
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      hopper::mbar_init(full_bar<Cfg>(smem, s), 1);
      hopper::mbar_init(empty_bar<Cfg>(smem, s), Cfg::kConsumerThreads);  // every consumer thread
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  pdl_wait();
  const SwappedUnits<Cfg> units = stage_units<Cfg>(args, smem_raw, tid);
  const bool nvfp4 = args.fp4_format == quant::BlockFormat::nvfp4;
  if (tid < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Cfg::kProducerRegs));
    if (tid == 0) {
      if (nvfp4) produce<Cfg, quant::BlockFormat::nvfp4>(args, units, smem);
      else produce<Cfg, quant::BlockFormat::mxfp4>(args, units, smem);
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Cfg::kConsumerRegs));
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0) - 1;  // warp-uniform to the compiler
    if constexpr (kOperand == DType::float16) {  // NVFP4 only (wgmma_gemm_unsupported)
      consume<Cfg, kOperand, quant::BlockFormat::nvfp4>(args, units, smem_raw, smem, wg, tid % 128);
    } else if (nvfp4) {
      consume<Cfg, kOperand, quant::BlockFormat::nvfp4>(args, units, smem_raw, smem, wg, tid % 128);
    } else {
      consume<Cfg, kOperand, quant::BlockFormat::mxfp4>(args, units, smem_raw, smem, wg, tid % 128);
    }
  }
  pdl_launch_dependents();
#else
  (void)args;
  __trap();  // sm_90a only; wgmma_gemm_built_for_sm90a tells the host
#endif
}

}  // namespace fp4_swapped

// The launch of one instantiation (fp4_swapped_{bf16,fp16}_{16,64}.cu): `ctas` persistent CTAs.
template <DType kOperand, int kRows>
cudaError_t launch_fp4_swapped(const WgmmaGemmArgs& args, int ctas, cudaStream_t stream, bool pdl) {
  using Cfg = fp4_swapped::SwappedConfig<kRows>;
  constexpr auto kernel = fp4_swapped::fp4_swapped_kernel<kOperand, kRows>;
  const cudaError_t status = ensure_smem_limit<kernel>(Cfg::kSmemBytes);
  if (status != cudaSuccess) return status;
  return launch_kernel(kernel, dim3(static_cast<unsigned>(ctas)), dim3(Cfg::kThreads), Cfg::kSmemBytes, stream, pdl,
                       args);
}

#define KBENCH_FP4_SWAPPED(operand, rows) \
  extern template cudaError_t launch_fp4_swapped<DType::operand, rows>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
KBENCH_FP4_SWAPPED(bfloat16, 16)
KBENCH_FP4_SWAPPED(bfloat16, 64)
KBENCH_FP4_SWAPPED(float16, 16)
KBENCH_FP4_SWAPPED(float16, 64)
#undef KBENCH_FP4_SWAPPED

}  // namespace kbench::kernels::gemm::sm90
