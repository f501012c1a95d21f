// kbench's fa3 prefill-attention kernel: FlashAttention-3 structure on sm_90a (TMA, wgmma,
// warp-specialized producer / consumer warpgroups, intra- and inter-warpgroup overlap of softmax
// and GEMMs). Private to kernels/attention/prefill/sm90; included by the per-head-dim translation
// units (prefill_fa3_<dims>.cu), each of which instantiates it for bf16, fp16 (and fp8_e4m3 where
// the head dims are 128 or 256).
//
// CTA = 3 warpgroups, persistent (CTA i runs work items i, i + gridDim.x, ...):
//  * producer (warpgroup 0, setmaxnreg 56; 24 with the wide tiles): thread 0 walks the
//    item list and hands each item over to the consumers with its 128-row Q tile: the 32-byte work
//    item (one bulk copy) and the Q tile (one TMA) land in a Q stage; then the K and V tiles of the
//    item go into a 2- or 3-stage ring, in the order the consumers use them (K0, K1, V0, K2, V1,
//    ...). Ragged KV: one TMA per tile (thread 0). Paged KV whose page size and block_n share a
//    power of two >= kMinBoxRows (Fa3Args::box_rows): a page-aligned tile is block_n / box_rows
//    boxes of box_rows keys, none crossing a page; warp 0 loads K and warp 1 V, lane j holding
//    box j's page (one tile ahead); boxes go by TMA, K one box per 128-byte column chunk, 16-bit V
//    (boxes of >= 16 rows) one box of all chunks in a box-major stage (Fa3Args::v_box_major); the
//    partial last tile is gathered by the warp with coalesced 16-byte cp.async. Other page sizes are
//    gathered by all 128 threads into the same swizzled layout, each thread owning a row (its
//    page-table lookup one tile ahead, its cache offset) and each warp copying its rows whole
//    (gather_tile). Gathers zero-fill keys outside [0, kv_len). Each of these paths is a loader of
//    its own (RaggedLoader, PageLoader, RowLoader) under one loop (produce). fp8: V is widened to
//    fp16 in shared memory by the whole warpgroup (PV runs in fp16; Q K^T in e4m3).
//  * consumers (warpgroups 1 and 2, setmaxnreg 224; 240 with the wide tiles): 64 query rows each. Each
//    item's geometry comes from the work item in its Q stage (no global read between items). Per KV
//    tile: S = Q K^T (wgmma SS, fp32), mask, online softmax (exp2, scale folded into log2 space), P
//    to 16 bits in registers, O += P V (wgmma RS). The QK^T of tile i is issued before the softmax
//    of tile i - 1's PV has finished (intra-warpgroup overlap); a pair of named barriers makes the
//    two warpgroups take turns issuing GEMMs so one's softmax runs under the other's GEMMs
//    (ping-pong).
//
// Tile geometry. The host does not know the tensors' lengths, so no load may read past the end of
// a request's rows (TMA reads negative coordinates as zeros; rows before the request belong to
// earlier requests and are finite):
//  * the Q window of item (q_begin, q_end) is request rows [q_end - 128, q_end); rows below q_begin
//    are computed and discarded (never stored);
//  * ragged and gathered KV tiles are aligned on the item's last visible key kmax (below): tile t
//    covers keys [kmax + 1 - (t + 1) N, kmax + 1 - t N) (keys < 0 masked, zero-filled), the fewest
//    N-key tiles that cover [0, kmax] (tiles END-aligned on kv_len visited one more, partly masked,
//    wherever the diagonal fell inside a tile); paged tiles loaded by TMA are page-aligned:
//    [t N, t N + N) (keys >= kv_len masked; that tile is gathered with zero fill, never reading a
//    slot past last_page_len). Causal (bottom-right): row i sees keys j <= i + kv_len - q_len, so an
//    item needs keys up to kmax, the last row's limit; its tiles are visited from the one holding
//    kmax (the diagonal) down to key 0, ItemInfo::key0 being the first one's first key. Only tiles
//    that can hold a masked key are masked.
// Rows that see no key have l = 0 and store zeros.
//
// Shared memory (1024-byte aligned buffers, 128-byte swizzle: a [chunk][rows][128 B] layout where
// a chunk is 128 bytes of a row, the layout TMA writes and wgmma descriptors read): Q buffers,
// K and V stages (fp8: also the raw e4m3 V stages) and mbarriers. A third K/V stage, then a second
// Q buffer, where they fit (Fa3Config).
// The work items are written by the async proxy (bulk copies) only: the consumers read them after
// q_full like the Q tile, and release them with it.
// Barriers:
//  * q_full: 1 arrival + the item's and the Q tile's bytes (an item whose rows see no key: the
//    item's bytes only);
//  * q_empty: lane 0 of every consumer warp, the warp's reader of the item (read_item), after its
//    warpgroup's last QK^T of the item or once it has read an item whose rows see no key (its own
//    read is then ordered before the next bulk copy into the stage, as racecheck requires);
//  * k/v_full: TMA, 1 arrival + bytes; page gather by a warp, 1 arrival, the cp.async landing held
//    back by their own arrivals; per-row gathers, 128 arrivals; fp8 v_full, 128 after widening;
//  * k/v_empty: one arrival per consumer warpgroup.
// Stage and parity come from running item / tile counts that the producer and the consumers advance
// identically (an item whose rows see no key has no tiles): stage = g % stages, parity = (g /
// stages) % 2.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include <cute/arch/mma_sm90.hpp>

#include "kernels/common/hopper.cuh"

#include "kernels/attention/prefill/sm90/prefill_fa3.hpp"
#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"
#include "kernels/common/tensor_map.hpp"

namespace kbench::kernels::prefill_fa3 {

// ------------------------------------------------------------------------------------------------
// Compile-time configuration of one instantiation.
// ------------------------------------------------------------------------------------------------

inline constexpr int kThreads = 384;
inline constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;  // 168 under __launch_bounds__(384, 1)
inline constexpr int kSwizzleBytes = 128;  // one swizzled row of a chunk
// Named barriers (0 is __syncthreads): the producer warpgroup's (fp8 V widening), and one per
// consumer warpgroup for the GEMM-issue turns.
inline constexpr int kProducerBarrier = 1;
inline constexpr int kSchedulerBarrier = 2;  // + consumer warpgroup index
inline constexpr int kItemBytes = static_cast<int>(sizeof(PrefillWorkItem));

// The geometry of one work item (the producer and the consumers derive it from the work item alike).
struct ItemInfo {
  int32_t num_tiles;   // KV tiles to visit; 0: rows see no key (store zeros)
  int32_t key0;        // request key of column 0 of the first tile visited; tile i: key0 - i N
  int32_t q_begin;     // request rows [q_begin, q_end) are stored
  int32_t q_end;
  int32_t q_row0;  // qo_indptr[request]
  int32_t qo_head;
  int32_t kv_len;
  int32_t q_len;
  int32_t kv_row0;  // the request's first K/V row (ragged) or page-table entry (paged)
};

template <class Elem, int kDqk, int kDvo, int kN>
struct Fa3Config {
  using Element = Elem;  // q / K / V as stored: cute::bfloat16_t, cute::half_t or cute::float_e4m3_t
  static constexpr bool kFp8 = sizeof(Elem) == 1;
  // The PV GEMM's operands: P and V in 16 bits (fp8 V is widened to fp16 in shared memory).
  using PvElement = std::conditional_t<kFp8, cute::half_t, Elem>;
  static constexpr int kHeadQk = kDqk;
  static constexpr int kHeadVo = kDvo;
  static constexpr int kBlockN = kN;
  static constexpr int kElemBytes = static_cast<int>(sizeof(Elem));
  static constexpr int kQkRowBytes = kDqk * kElemBytes;
  static constexpr int kVoRowBytes = kDvo * 2;                // V as the PV GEMM reads it
  static constexpr int kVLoadRowBytes = kDvo * kElemBytes;    // V as loaded
  static constexpr int kQkStep = 32 / kElemBytes;             // wgmma K of the QK^T GEMM (32 bytes)
  static constexpr int kQBytes = kBlockM * kQkRowBytes;
  static constexpr int kKBytes = kN * kQkRowBytes;  // one stage
  static constexpr int kVBytes = kN * kVoRowBytes;
  static constexpr int kVLoadBytes = kN * kVLoadRowBytes;
  static constexpr int kVRawBytes = kFp8 ? kVLoadBytes : 0;  // fp8: the loaded bytes, before widening
  // Stages by shared-memory fit (227 KB per block, less room for barriers): a third K/V stage first
  // (load latency: paged cp.async round trips need more than one tile of slack), then a second Q
  // buffer (the next item's Q loads during the current item).
  static constexpr int kStageBytes = kKBytes + kVBytes + kVRawBytes;
  static constexpr int kSmemBudget = 226 * 1024;
  static constexpr int kStages = kQBytes + 3 * kStageBytes <= kSmemBudget ? 3 : 2;
  static constexpr int kQStages = 2 * kQBytes + kStages * kStageBytes <= kSmemBudget ? 2 : 1;
  static constexpr int kQOffset = 0;
  static constexpr int kKOffset = kQOffset + kQStages * kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kKBytes;
  static constexpr int kVRawOffset = kVOffset + kStages * kVBytes;
  static constexpr int kBarOffset = kVRawOffset + kStages * kVRawBytes;
  static constexpr int kNumBarriers = 2 * kQStages + (kFp8 ? 5 : 4) * kStages;
  static constexpr int kItemOffset = (kBarOffset + 8 * kNumBarriers + 15) / 16 * 16;  // one work item per Q stage
  static constexpr int kSmemBytes = kItemOffset + kQStages * kItemBytes;
  // Accumulator registers per consumer thread (64 rows x columns over 128 threads).
  static constexpr int kSRegs = kN / 2;
  static constexpr int kORegs = kDvo / 2;
  static constexpr int kPRegs = kN / 4;  // P as packed 16-bit pairs
  // Paged K/V (gathers, page-aligned tiles) needs equal head dims and tiles of whole producer rows.
  static constexpr bool kPagedCapable = kDqk == kDvo && 128 % kN == 0;
  // setmaxnreg moves registers inside the CTA's own allocation (168 x 384 at launch): the consumers'
  // increase must be covered by what the producer releases, or their setmaxnreg.inc never returns.
  // The paged producer spilled in its per-tile loop at 40 (page 16 ran 12% slower) and the
  // consumers fit in 224; the wide tiles (ragged only: one producer thread) need 240.
  static constexpr bool kWide = !kPagedCapable && kN != 128;  // ragged-only wide tiles (192 or 80 keys)
  static constexpr int kProducerRegs = kWide ? 24 : 56;
  static constexpr int kConsumerRegs = kWide ? 240 : 224;
  static_assert(128 * kProducerRegs + 256 * kConsumerRegs <= kThreads * kLaunchRegs, "register pool");
  static_assert(kQkRowBytes % kSwizzleBytes == 0 && kVLoadRowBytes % kSwizzleBytes == 0, "whole chunks");
  static_assert(kN % 16 == 0 && kN <= 256, "wgmma N and the PV k-steps");
  static_assert(kQBytes % 1024 == 0 && kKBytes % 1024 == 0 && kVBytes % 1024 == 0 && kVRawBytes % 1024 == 0,
                "swizzle atoms stay aligned");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block");
};

// ------------------------------------------------------------------------------------------------
// Device primitives (sm_90a).
// ------------------------------------------------------------------------------------------------
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

namespace dev {

using namespace ::kbench::kernels::hopper;  // the shared primitives, as dev::...

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace dev

// ------------------------------------------------------------------------------------------------
// Shared-memory addresses of one CTA.
// ------------------------------------------------------------------------------------------------
template <class Cfg>
struct SmemMap {
  uint32_t addr;  // shared-window address of the dynamic shared memory

  __device__ uint32_t q(uint32_t qs) const { return addr + Cfg::kQOffset + qs * Cfg::kQBytes; }
  __device__ uint32_t k(uint32_t stage) const { return addr + Cfg::kKOffset + stage * Cfg::kKBytes; }
  __device__ uint32_t v(uint32_t stage) const { return addr + Cfg::kVOffset + stage * Cfg::kVBytes; }
  __device__ uint32_t v_raw(uint32_t stage) const { return addr + Cfg::kVRawOffset + stage * Cfg::kVRawBytes; }
  __device__ uint32_t bar(int i) const { return addr + Cfg::kBarOffset + 8 * i; }
  __device__ uint32_t item(uint32_t qs) const { return addr + Cfg::kItemOffset + qs * kItemBytes; }
  static constexpr int kKv = 2 * Cfg::kQStages;  // first K/V barrier
  __device__ uint32_t q_full(uint32_t qs) const { return bar(qs); }
  __device__ uint32_t q_empty(uint32_t qs) const { return bar(Cfg::kQStages + qs); }
  __device__ uint32_t k_full(uint32_t s) const { return bar(kKv + s); }
  __device__ uint32_t k_empty(uint32_t s) const { return bar(kKv + Cfg::kStages + s); }
  __device__ uint32_t v_full(uint32_t s) const { return bar(kKv + 2 * Cfg::kStages + s); }
  __device__ uint32_t v_empty(uint32_t s) const { return bar(kKv + 3 * Cfg::kStages + s); }
  __device__ uint32_t v_raw_full(uint32_t s) const { return bar(kKv + 4 * Cfg::kStages + s); }  // fp8 only
  // K/V stage and barrier parity of running tile g.
  __device__ static uint32_t stage(uint32_t g) { return g % Cfg::kStages; }
  __device__ static uint32_t parity(uint32_t g) { return (g / Cfg::kStages) & 1; }
};


// ------------------------------------------------------------------------------------------------
// Producer warpgroup.
// ------------------------------------------------------------------------------------------------

// Whether paged K/V tiles are page-aligned ([t N, t N + N): boxes of box_rows keys inside one page
// each, loaded by TMA or the coalesced box gather). The launch sets page_maps only with box_rows
// dividing this instantiation's block_n.
__device__ __forceinline__ bool page_aligned(const Fa3Args& a) { return a.paged && a.page_maps; }

// log2 of the rows per block of a V stage (stage_offset): a box when V is box-major, else kN.
template <int kN>
__device__ __forceinline__ int v_block_shift(const Fa3Args& a) {
  return __ffs(a.v_box_major ? a.box_rows : kN) - 1;
}

// Geometry of a work item (see the file comment): arithmetic on the item alone.
template <int kN>
__device__ __forceinline__ ItemInfo load_item(const Fa3Args& a, const PrefillWorkItem& item) {
  ItemInfo info{};
  info.q_row0 = item.q_row0;
  info.q_len = item.q_len;
  info.q_begin = max(item.q_begin, 0);
  info.q_end = min(item.q_end, info.q_len);
  info.qo_head = item.qo_head;
  info.kv_row0 = item.kv_row0;
  info.kv_len = item.kv_len;
  info.num_tiles = 0;
  info.key0 = 0;
  if (info.kv_len > 0 && info.q_end > info.q_begin) {
    int kmax = info.kv_len - 1;  // the last row's last visible key
    if (a.causal) kmax = min(kmax, info.q_end - 1 + info.kv_len - info.q_len);
    if (kmax >= 0) {
      if (page_aligned(a)) {  // tiles [t N, t N + N), t = kmax / N down to 0
        info.num_tiles = kmax / kN + 1;
        info.key0 = kmax / kN * kN;
      } else {  // tiles [kmax + 1 - (t + 1) N, kmax + 1 - t N), t = 0 up to kmax / N
        info.num_tiles = kmax / kN + 1;
        info.key0 = kmax + 1 - kN;
      }
    }
  }
  return info;
}

// The work item a consumer warp finds in its Q stage (written there by the producer's bulk copy):
// lane 0 reads it (the warp's only reader: its arrival on q_empty then orders the read before the
// next copy into the stage) and hands it to the other lanes.
__device__ __forceinline__ PrefillWorkItem read_item(uint32_t slot, int lane) {
  int32_t v[8] = {};
  if (lane == 0) {
    asm volatile("ld.shared.v4.s32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                 : "r"(slot)
                 : "memory");
    asm volatile("ld.shared.v4.s32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7])
                 : "r"(slot + 16)
                 : "memory");
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = __shfl_sync(0xffffffffu, v[i], 0);
  return PrefillWorkItem{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
}

// Paged gather: producer thread p owns tile row p / (128 / N). It looks up the row's page one tile
// ahead and keeps the row's cache offset as a code: the offset in 128-byte units plus one (0: key
// outside [0, kv_len), zero-filled). Every paged offset is a multiple of a row (head_dim x element
// size >= 128 bytes), so 32 bits cover 512 GB of cache and one shuffle hands a row to its copiers.
template <int kN>
struct PagedRow {
  static constexpr int kThreadsPerRow = 128 % kN == 0 ? 128 / kN : 1;  // (used where kPagedCapable)
  int row;       // tile row of this thread
  int32_t page;  // page-table entry of the row's key in the tile looked up last (-1: none)
  int32_t slot;  // the key's slot in that page

  __device__ __forceinline__ void lookup(const Fa3Args& a, int key, int32_t page_begin, int kv_len) {
    page = -1;
    if (key >= 0 && key < kv_len) {
      const int entry = static_cast<int>(a.page_div.divide(static_cast<uint32_t>(key)));
      slot = key - entry * a.page_size;
      page = a.page_indices[page_begin + entry];
    }
  }
  __device__ __forceinline__ uint32_t code(const Fa3Args& a, int64_t head_offset) const {
    if (page < 0) return 0u;
    const int64_t offset =
        static_cast<int64_t>(page) * a.page_stride + static_cast<int64_t>(slot) * a.slot_stride + head_offset;
    return static_cast<uint32_t>(offset >> 7) + 1u;
  }
};

// Per-row gather, coalesced: the lanes of a warp copy the warp's rows whole, one to four rows an
// instruction (a row's 16-byte chunks on consecutive lanes), each row's code shuffled from its
// owner. Whole rows an instruction matter more than instructions here (measured on pages of 12,
// per row of 256 bytes: a thread a row, 16 instructions apart, 1.00x; 128-byte halves of 4 rows an
// instruction, half the instructions, 1.15x; whole rows 1.42x): the row's lines reach the memory
// together. The passes are unrolled by 8 (pages of 1, 8 x 2048 causal, head 128: 0.58 ms; by 4
// 0.62, by 2 0.70, by 1 0.81, all 16 passes 0.68-0.75 as the code around it moved).
template <int kN, int kRowBytes>
__device__ __forceinline__ void gather_tile(const uint8_t* cache, uint32_t row_code, uint32_t stage, int ptid) {
  static_assert(128 % kN == 0 && kRowBytes % 128 == 0 && kRowBytes <= 512, "whole rows per producer thread");
  constexpr int kThreadsPerRow = PagedRow<kN>::kThreadsPerRow;  // owners of one row's code
  constexpr int kRowsPerWarp = 32 / kThreadsPerRow;
  constexpr int kLanesPerRow = kRowBytes / 16;  // an instruction copies kRowsPerPass whole rows
  constexpr int kRowsPerPass = 32 / kLanesPerRow;
  const int lane = ptid % 32;
  const int chunk = lane % kLanesPerRow;
  const int pass_row = lane / kLanesPerRow;
  const int first_row = ptid / 32 * kRowsPerWarp + pass_row;  // a multiple of 8 plus pass_row
  const uint8_t* const src_base = cache + chunk * 16;
  // Swizzle: chunk c of row r sits at 16 ((c % 8) ^ (r % 8)); r % 8 = (pass rows % 8) ^ pass_row.
  const uint32_t swizzle = static_cast<uint32_t>((chunk % 8) ^ pass_row);
  const uint32_t dst_base = stage + first_row * kSwizzleBytes + (chunk / 8) * (kN * kSwizzleBytes);
#pragma unroll 8
  for (int pass = 0; pass < kRowsPerWarp / kRowsPerPass; ++pass) {
    const uint32_t code = __shfl_sync(0xffffffffu, row_code, (pass * kRowsPerPass + pass_row) * kThreadsPerRow);
    const uint8_t* const src = src_base + static_cast<uint64_t>(max(code, 1u) - 1u) * 128u;
    const uint32_t dst = dst_base + pass * kRowsPerPass * kSwizzleBytes +
                         ((swizzle ^ static_cast<uint32_t>(pass * kRowsPerPass % 8)) * 16);
    dev::cp_async_16(dst, src, code != 0u ? 16u : 0u);
  }
}

// Byte offset of 16-byte chunk `chunk` of tile row `row` in a swizzled stage whose rows come in
// blocks of 1 << block_shift rows ([block][128-byte column chunk][row][128 B]): K and ragged or
// gathered V stages are one block of kN rows, box-major V one block per box.
template <int kRowBytes>
__device__ __forceinline__ uint32_t stage_offset(int row, int chunk, int block_shift) {
  const int block_rows = 1 << block_shift;
  return (row >> block_shift) * (block_rows * kRowBytes) + (chunk / 8) * (block_rows * kSwizzleBytes) +
         (row & (block_rows - 1)) * kSwizzleBytes + (((chunk % 8) ^ (row % 8)) * 16);
}

// Page-aligned tile gathered by one producer warp with 16-byte cp.async, coalesced: the lanes of a
// pass copy consecutive rows whole (512 contiguous bytes of a box's rows), so an instruction
// touches 4 cache lines instead of 32. Lane j holds box j of the tile (`lane_page`, `lane_slot`: its
// page and first slot), handed to the copiers as one code (PagedRow::code's); rows >= valid_rows
// (keys >= kv_len) are zero-filled. Each lane's copies arrive on `full` as they land (net zero on
// its count); lane 0 then gives the stage's one arrival.
template <int kN, int kRowBytes>
__device__ __forceinline__ void gather_pages(const Fa3Args& a, int64_t head_offset, int32_t lane_page, int lane_slot,
                                             int valid_rows, uint32_t stage, int block_shift, uint32_t full,
                                             int lane) {
  constexpr int kThreadsPerRow = kRowBytes / 16;
  constexpr int kRowsPerPass = 32 / kThreadsPerRow;
  static_assert(32 % kThreadsPerRow == 0 && kN % kRowsPerPass == 0, "whole rows per pass");
  const int chunk = lane % kThreadsPerRow;
  const int box_shift = __ffs(a.box_rows) - 1;
  const uint32_t lane_code = PagedRow<kN>{0, lane_page, lane_slot}.code(a, head_offset);
#pragma unroll 1  // (register fit of the producer)
  for (int pass = 0; pass < kN / kRowsPerPass; ++pass) {
    const int row = pass * kRowsPerPass + lane / kThreadsPerRow;
    const uint32_t code = __shfl_sync(0xffffffffu, lane_code, row >> box_shift);
    const bool valid = row < valid_rows;
    const uint8_t* src = valid ? a.cache + static_cast<uint64_t>(code - 1u) * 128u +
                                     static_cast<int64_t>(row & (a.box_rows - 1)) * a.slot_stride + chunk * 16
                               : a.cache;
    dev::cp_async_16(stage + stage_offset<kRowBytes>(row, chunk, block_shift), src, valid ? 16u : 0u);
  }
  dev::cp_async_arrive(full);
  __syncwarp();
  if (lane == 0) dev::mbar_arrive(full);
}

// Paged by TMA: lane j of the loading warp loads box j of the tile (`page`, -1: none; its first
// slot `slot`): kBoxes boxes (column chunk c lands chunk_bytes after chunk 0; one box of all
// chunks: box-major V), box j's first at j * box_bytes. Lane 0 gives the stage's one arrival with
// the transaction bytes first (a box must not land on a phase that does not expect it yet).
template <int kBoxes>
__device__ __forceinline__ void load_pages(const CUtensorMap* map, uint32_t stage, uint32_t full, uint32_t bytes,
                                           uint32_t chunk_bytes, uint32_t box_bytes, int32_t page, int slot,
                                           int kv_head, int lane) {
  if (lane == 0) dev::mbar_arrive_expect_tx(full, bytes);
  __syncwarp();
  if (page >= 0) {
    const uint32_t dst = stage + lane * box_bytes;
#pragma unroll
    for (int c = 0; c < kBoxes; ++c) dev::tma_load_5d(dst + c * chunk_bytes, map, full, 0, slot, kv_head, c, page);
  }
}

// fp8: the loaded V tile (e4m3, [Dvo/128][N][128 B] swizzled) widened to fp16 in the layout of a
// 16-bit V tile ([Dvo/64][N][128 B] swizzled). Each thread converts 16-byte chunks: 16 values of
// one row into two 16-byte chunks of the same row.
template <class Cfg>
__device__ __forceinline__ void widen_v(uint32_t raw, uint32_t wide, int ptid) {
  constexpr int kN = Cfg::kBlockN;
  constexpr int kChunksPerRow = Cfg::kVLoadRowBytes / 16;
  static_assert(128 % kChunksPerRow == 0 && kN * kChunksPerRow % 128 == 0, "whole rows per pass");
  const int chunk = ptid % kChunksPerRow;  // values [16 chunk, 16 chunk + 16) of the row
#pragma unroll 2
  for (int pass = 0; pass < kN * kChunksPerRow / 128; ++pass) {
    const int row = ptid / kChunksPerRow + pass * (128 / kChunksPerRow);
    const uint32_t src = raw + (chunk / 8) * (kN * kSwizzleBytes) + row * kSwizzleBytes + (((chunk % 8) ^ (row % 8)) * 16);
    uint32_t words[4];
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(words[0]), "=r"(words[1]), "=r"(words[2]), "=r"(words[3])
                 : "r"(src)
                 : "memory");
    uint32_t out[8];
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(words[w] & 0xffff), __NV_E4M3);
      const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(words[w] >> 16), __NV_E4M3);
      out[2 * w] = static_cast<uint32_t>(lo.x) | (static_cast<uint32_t>(lo.y) << 16);
      out[2 * w + 1] = static_cast<uint32_t>(hi.x) | (static_cast<uint32_t>(hi.y) << 16);
    }
    // fp16 values 16 chunk .. +15: 64-value block chunk / 4, 16-byte chunks 2 (chunk % 4) and + 1.
    const uint32_t dst_row = wide + (chunk / 4) * (kN * kSwizzleBytes) + row * kSwizzleBytes;
    const int c0 = 2 * (chunk % 4);
    const uint32_t d0 = dst_row + (((c0) ^ (row % 8)) * 16);
    const uint32_t d1 = dst_row + (((c0 + 1) ^ (row % 8)) * 16);
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(d0), "r"(out[0]), "r"(out[1]), "r"(out[2]),
                 "r"(out[3])
                 : "memory");
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(d1), "r"(out[4]), "r"(out[5]), "r"(out[6]),
                 "r"(out[7])
                 : "memory");
  }
}

// The producer's loaders: how the K and V tiles of an item reach their stages, one per path, each
// holding only its own state. The producer runs on 56 registers: one loop carrying every path's
// state spilled in its per-tile loop, and under the per-row gathers' traffic those local loads
// missed L1 and held each tile back (fa3 on pages of 12: half the speed of page TMA). Each loader
// has: k_loader / v_loader (this thread loads K / V); begin(info) (an item's first tile looked up);
// advance(i) (tile i's state, tile i + 1 looked up; before K of tile i); load_k(i, dst, full) and
// load_v(i, previous, dst, full) (V of tile i, or of tile i - 1 while tile i is current), each once
// the stage is free.

// Ragged K/V: thread 0, one TMA per tile.
template <class Cfg>
struct RaggedLoader {
  static constexpr bool kCopies = false;  // no cp.async
  const Fa3Args& a;
  bool k_loader;
  bool v_loader;
  int row0;  // K/V row of tile 0's first key
  int kv_head;

  __device__ RaggedLoader(const Fa3Args& args, int ptid) : a(args), k_loader(ptid == 0), v_loader(ptid == 0) {}
  __device__ void begin(const ItemInfo& info) {
    row0 = info.kv_row0 + info.key0;
    kv_head = info.qo_head / a.group;
  }
  __device__ void advance(int) {}
  __device__ void load_k(int i, uint32_t dst, uint32_t full) const {
    dev::mbar_arrive_expect_tx(full, Cfg::kKBytes);
    dev::tma_load_4d(dst, &a.tma_k, full, 0, row0 - i * Cfg::kBlockN, kv_head, 0);
  }
  __device__ void load_v(int i, bool, uint32_t dst, uint32_t full) const {
    dev::mbar_arrive_expect_tx(full, Cfg::kVLoadBytes);
    dev::tma_load_4d(dst, &a.tma_v, full, 0, row0 - i * Cfg::kBlockN, kv_head, 0);
  }
};

// What the paged loaders take from an item.
struct PagedItem {
  int key0;             // tile i: keys [key0 - i N, + N)
  int kv_len;
  int page_begin;       // the request's first page-table entry
  int num_tiles;
  int kv_head;
  int64_t head_offset;  // the kv head's first byte in a K row

  __device__ void set(const Fa3Args& a, const ItemInfo& info) {
    key0 = info.key0;
    kv_len = info.kv_len;
    page_begin = info.kv_row0;
    num_tiles = info.num_tiles;
    kv_head = info.qo_head / a.group;
    head_offset = static_cast<int64_t>(kv_head) * a.head_stride;
  }
};

// Paged, page-aligned tiles of boxes: warp 0 loads K and warp 1 V (TMA boxes of their lanes,
// issued one lane after the other: two warps halve that serial issue, and more warps cost the
// consumers more than they save). Lane j holds the page of box j of tiles i + 1, i and i - 1 (its
// slot is recomputed as the box is loaded); the tile that holds keys >= kv_len (only the first one
// visited) is gathered, zero-filled (gather_pages).
template <class Cfg>
struct PageLoader : PagedItem {
  static constexpr bool kCopies = true;
  static constexpr int kN = Cfg::kBlockN;
  const Fa3Args& a;
  bool k_loader;
  bool v_loader;
  int lane;
  bool box_lane;  // lane < boxes per tile
  int32_t page_next = -1;
  int32_t page = -1;
  int32_t prev_page = -1;

  __device__ PageLoader(const Fa3Args& args, int ptid)
      : a(args), k_loader(ptid / 32 == 0), v_loader(ptid / 32 == 1), lane(ptid % 32),
        box_lane(ptid % 32 < kN / args.box_rows) {}
  __device__ int tile_key0(int i) const { return key0 - i * kN; }
  __device__ int box_key(int i) const { return tile_key0(i) + lane * a.box_rows; }
  __device__ int box_slot(int i) const {
    const int key = box_key(i);
    return key - static_cast<int>(a.page_div.divide(static_cast<uint32_t>(key))) * a.page_size;
  }
  __device__ bool by_tma(int i) const { return tile_key0(i) + kN <= kv_len; }
  __device__ void lookup(int i) {
    const int key = box_key(i);
    page_next = box_lane && key < kv_len
                    ? a.page_indices[page_begin + static_cast<int>(a.page_div.divide(static_cast<uint32_t>(key)))]
                    : -1;
  }
  __device__ void begin(const ItemInfo& info) {
    set(a, info);
    lookup(0);
  }
  __device__ void advance(int i) {
    prev_page = page;
    page = page_next;
    if (i + 1 < num_tiles) lookup(i + 1);
  }
  __device__ void load_k(int i, uint32_t dst, uint32_t full) const {
    if (by_tma(i)) {
      load_pages<Cfg::kQkRowBytes / kSwizzleBytes>(&a.tma_k, dst, full, Cfg::kKBytes, kN * kSwizzleBytes,
                                                   a.box_rows * kSwizzleBytes, page, box_slot(i), kv_head, lane);
    } else {
      gather_pages<kN, Cfg::kQkRowBytes>(a, head_offset, page, box_slot(i), kv_len - tile_key0(i), dst, __ffs(kN) - 1,
                                         full, lane);
    }
  }
  __device__ void load_v(int i, bool previous, uint32_t dst, uint32_t full) const {
    constexpr int kChunks = Cfg::kVLoadRowBytes / kSwizzleBytes;
    const int32_t box_page = previous ? prev_page : page;
    if (by_tma(i) && a.v_box_major) {
      load_pages<1>(&a.tma_v, dst, full, Cfg::kVLoadBytes, 0, a.box_rows * Cfg::kVLoadRowBytes, box_page,
                    box_slot(i), kv_head, lane);
    } else if (by_tma(i)) {
      load_pages<kChunks>(&a.tma_v, dst, full, Cfg::kVLoadBytes, kN * kSwizzleBytes, a.box_rows * kSwizzleBytes,
                          box_page, box_slot(i), kv_head, lane);
    } else {
      gather_pages<kN, Cfg::kVLoadRowBytes>(a, head_offset + a.v_offset, box_page, box_slot(i), kv_len - tile_key0(i),
                                            dst, v_block_shift<kN>(a), full, lane);
    }
  }
};

// Paged, other page sizes: the whole warpgroup, a row a thread (PagedRow, gather_tile).
template <class Cfg>
struct RowLoader : PagedItem {
  static constexpr bool kCopies = true;
  static constexpr int kN = Cfg::kBlockN;
  const Fa3Args& a;
  bool k_loader = true;
  bool v_loader = true;
  int ptid;
  PagedRow<kN> rows;
  uint32_t code = 0;       // this thread's row in tile i and i - 1 (PagedRow::code)
  uint32_t prev_code = 0;

  __device__ RowLoader(const Fa3Args& args, int thread) : a(args), ptid(thread), rows{thread / PagedRow<kN>::kThreadsPerRow, -1, 0} {}
  __device__ int row_key(int i) const { return key0 - i * kN + rows.row; }
  __device__ void begin(const ItemInfo& info) {
    set(a, info);
    rows.lookup(a, row_key(0), page_begin, kv_len);
  }
  __device__ void advance(int i) {
    prev_code = code;
    code = rows.code(a, head_offset);
    if (i + 1 < num_tiles) rows.lookup(a, row_key(i + 1), page_begin, kv_len);
  }
  __device__ void load_k(int, uint32_t dst, uint32_t full) const {
    gather_tile<kN, Cfg::kQkRowBytes>(a.cache, code, dst, ptid);
    dev::cp_async_arrive_noinc(full);
  }
  __device__ void load_v(int, bool previous, uint32_t dst, uint32_t full) const {
    const uint32_t row_code = previous ? prev_code : code;  // V row = K row + v_offset (a multiple of 128 bytes)
    gather_tile<kN, Cfg::kVLoadRowBytes>(a.cache, row_code != 0u ? row_code + static_cast<uint32_t>(a.v_offset >> 7) : 0u,
                                         dst, ptid);
    dev::cp_async_arrive_noinc(full);
  }
};

// The producer warpgroup with one loader. Thread 0 hands each item over (work item + Q); the
// loader's threads load K and V; fp8 V is widened by the whole warpgroup.
// Order per item (the consumers' order): K0, [K1, V0], [K2, V1], ..., V(n-1); fp8: K0, V0, [K1, V1,
// widen V0], ..., widen V(n-1) (the raw V of a tile lands while the previous one is widened).
template <class Cfg, class Loader>
__device__ __forceinline__ void produce(const Fa3Args& a, const SmemMap<Cfg>& sm, int ptid, Loader loader) {
  constexpr int kN = Cfg::kBlockN;
  constexpr bool kWiden = Cfg::kFp8;
  const bool loads = loader.k_loader || loader.v_loader;
  if (!loads && !kWiden) return;
  const bool issuer = ptid == 0;
  uint32_t item = 0;  // running item count (Q stage / parity)
  uint32_t tile = 0;  // running KV tile count (stage / parity)
  for (int index = blockIdx.x; index < a.num_items; index += gridDim.x) {
    const PrefillWorkItem* const entry = a.items + index;
    const ItemInfo info = load_item<kN>(a, *entry);
    const int n = info.num_tiles;
    // The work item and (n > 0) its Q tile into the next Q stage, once the consumers are done with it.
    auto hand_over = [&] {
      if (issuer) {
        const uint32_t qs = item % Cfg::kQStages;
        dev::mbar_wait(sm.q_empty(qs), ((item / Cfg::kQStages) & 1) ^ 1);
        dev::mbar_arrive_expect_tx(sm.q_full(qs), kItemBytes + (n > 0 ? Cfg::kQBytes : 0));
        dev::bulk_load(sm.item(qs), entry, kItemBytes, sm.q_full(qs));
        if (n > 0) {
          dev::tma_load_4d(sm.q(qs), &a.tma_q, sm.q_full(qs), 0, info.q_row0 + info.q_end - kBlockM, info.qo_head, 0);
        }
      }
      ++item;
    };
    if (n <= 0) {  // rows that see no key: the consumers store zeros
      hand_over();
      continue;
    }
    if (loads) loader.begin(info);
    auto load_k = [&](int i) {
      const uint32_t g = tile + i;
      if (loads) loader.advance(i);
      if (!loader.k_loader) return;
      dev::mbar_wait(sm.k_empty(sm.stage(g)), sm.parity(g) ^ 1);
      loader.load_k(i, sm.k(sm.stage(g)), sm.k_full(sm.stage(g)));
    };
    // V of tile i as stored: 16-bit into the consumers' V stage; fp8 into the raw stage (free: the
    // widening that read it ended with a producer barrier).
    auto load_v = [&](int i, bool previous) {
      const uint32_t g = tile + i;
      if (!loader.v_loader) return;
      if (!kWiden) dev::mbar_wait(sm.v_empty(sm.stage(g)), sm.parity(g) ^ 1);
      loader.load_v(i, previous, kWiden ? sm.v_raw(sm.stage(g)) : sm.v(sm.stage(g)),
                    kWiden ? sm.v_raw_full(sm.stage(g)) : sm.v_full(sm.stage(g)));
    };
    // fp8: widen the raw V of tile i into the consumers' V stage.
    auto widen = [&](int i) {
      if constexpr (kWiden) {
        const uint32_t g = tile + i;
        dev::mbar_wait(sm.v_raw_full(sm.stage(g)), sm.parity(g));
        dev::mbar_wait(sm.v_empty(sm.stage(g)), sm.parity(g) ^ 1);
        widen_v<Cfg>(sm.v_raw(sm.stage(g)), sm.v(sm.stage(g)), ptid);
        dev::fence_proxy_async();  // generic-proxy stores, read next by wgmma
        dev::mbar_arrive(sm.v_full(sm.stage(g)));
        dev::named_sync_reconverged(kProducerBarrier, 128);  // the raw stage is free again
      }
    };

    // K of the first tile goes out before waiting for the Q buffer (the consumers may still be
    // finishing the previous item).
    load_k(0);
    hand_over();
    if constexpr (kWiden) {
      load_v(0, false);
      for (int i = 1; i < n; ++i) {
        load_k(i);
        load_v(i, false);
        widen(i - 1);
      }
      widen(n - 1);
    } else {
      for (int i = 1; i < n; ++i) {
        load_k(i);
        load_v(i - 1, true);
      }
      load_v(n - 1, false);
    }
    tile += n;
  }
  if constexpr (Loader::kCopies) dev::cp_async_wait_all();
}

// The producer warpgroup: the loader of the K/V source (paged K/V has head_dim_qk == head_dim_vo,
// fa3_supported, and never takes the wide tiles: other instantiations have no paged loaders).
template <class Cfg>
__device__ __forceinline__ void run_producer(const Fa3Args& a, const SmemMap<Cfg>& sm, int ptid) {
  if (!a.paged) {
    produce<Cfg>(a, sm, ptid, RaggedLoader<Cfg>(a, ptid));
  } else if constexpr (Cfg::kPagedCapable) {
    if (page_aligned(a)) {
      produce<Cfg>(a, sm, ptid, PageLoader<Cfg>(a, ptid));
    } else {
      produce<Cfg>(a, sm, ptid, RowLoader<Cfg>(a, ptid));
    }
  } else {
    __trap();
  }
}

// ------------------------------------------------------------------------------------------------
// Consumer warpgroups.
// ------------------------------------------------------------------------------------------------

template <class Cfg>
struct Gmma {
  using E = typename Cfg::Element;
  using P = typename Cfg::PvElement;
  using QkOp = decltype(cute::SM90::GMMA::ss_op_selector<
                        E, E, float, cute::Shape<cute::_64, cute::Int<Cfg::kBlockN>, cute::Int<Cfg::kQkStep>>,
                        cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::K>());
  using PvOp = decltype(cute::SM90::GMMA::rs_op_selector<P, P, float,
                                                         cute::Shape<cute::_64, cute::Int<Cfg::kHeadVo>, cute::_16>,
                                                         cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::MN>());

  // S = Q K^T over the head dim: k-steps of 32 bytes (16 16-bit / 32 fp8 elements) inside
  // 128-byte chunks.
  __device__ static __forceinline__ void qk(uint32_t q_rows, uint32_t k_stage, float (&s)[Cfg::kSRegs]) {
    constexpr int kSteps = Cfg::kQkRowBytes / 32;
    const uint64_t qd = dev::smem_desc(q_rows, 16, 1024);
    const uint64_t kd = dev::smem_desc(k_stage, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      const uint32_t q_off = (kk / 4) * (kBlockM * kSwizzleBytes) + (kk % 4) * 32;
      const uint32_t k_off = (kk / 4) * (Cfg::kBlockN * kSwizzleBytes) + (kk % 4) * 32;
      dev::gmma_ss<QkOp>(qd + (q_off >> 4), kd + (k_off >> 4), s, kk > 0, std::make_index_sequence<Cfg::kSRegs>{});
    }
  }

  // O += P V: k-steps of 16 keys (16 rows of 128 B = 2048 bytes); V is N-major (head dim
  // contiguous), in blocks of 1 << v_shift rows (stage_offset) whose 64-element chunks are a block's
  // rows * 128 bytes apart (a k-step stays inside a block: blocks of >= 16 rows). Instantiations
  // without paged K/V have one block of kBlockN rows (not always a power of two).
  __device__ static __forceinline__ void pv(const uint32_t (&p)[Cfg::kPRegs], uint32_t v_stage, int v_shift,
                                            float (&o)[Cfg::kORegs]) {
    constexpr int kSteps = Cfg::kBlockN / 16;
    constexpr int kChunks = Cfg::kVoRowBytes / kSwizzleBytes;
    const uint32_t block_rows = Cfg::kPagedCapable ? 1u << v_shift : Cfg::kBlockN;
    const uint64_t vd = dev::smem_desc(v_stage, block_rows * kSwizzleBytes, 1024);
    const uint32_t next_block_skip = block_rows * kSwizzleBytes * (kChunks - 1);  // past the block's other chunks
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      const uint32_t block = Cfg::kPagedCapable ? (16u * kk) >> v_shift : 0;
      const uint32_t offset = kk * 2048 + block * next_block_skip;
      dev::gmma_rs<PvOp>(p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3], vd + (offset >> 4), o,
                         std::make_index_sequence<Cfg::kORegs>{});
    }
  }
};

// Online-softmax state of a thread's two rows (tile rows r0 and r0 + 8 of its warpgroup's 64).
struct RowState {
  float m0, m1;  // running max of the raw logits (-inf: none yet)
  float l0, l1;  // this thread's share of the running sums
};

// Masks tile `t` of S where needed, updates the row state and turns S into P = exp2(s * scale - m)
// (in place, fp32). Returns the factors the old O rows must be scaled by.
template <class Cfg>
__device__ __forceinline__ void softmax_tile(float (&s)[Cfg::kSRegs], RowState& st, const ItemInfo& info, int i,
                                             int row0, int quad, bool causal, float scale, float& alpha0,
                                             float& alpha1) {
  constexpr int kN = Cfg::kBlockN;
  const int key0 = info.key0 - i * kN;  // key of column 0 of the item's tile i
  const int q0 = info.q_end - kBlockM;  // request row of tile row 0
  const int diag = info.kv_len - info.q_len;
  const bool needs_mask = key0 < 0 || key0 + kN > info.kv_len || (causal && key0 + kN - 1 > q0 + diag);
  if (needs_mask) {
    // Valid columns: lo <= col <= hi (keys in [0, kv_len); causal: key <= row + kv_len - q_len).
    const int lo = -key0;
    const int last = info.kv_len - 1 - key0;
    const int hi0 = causal ? min(last, q0 + row0 + diag - key0) : last;
    const int hi1 = causal ? min(last, q0 + row0 + 8 + diag - key0) : last;
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int col = 8 * j + 2 * quad + c;
        if (col < lo || col > hi0) s[4 * j + c] = -INFINITY;
        if (col < lo || col > hi1) s[4 * j + 2 + c] = -INFINITY;
      }
    }
  }
  float mx0 = st.m0, mx1 = st.m1;
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    mx0 = fmaxf(mx0, fmaxf(s[4 * j], s[4 * j + 1]));
    mx1 = fmaxf(mx1, fmaxf(s[4 * j + 2], s[4 * j + 3]));
  }
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
  // A row with no key yet keeps max -inf: subtract 0 instead (its P are all exp2(-inf) = 0).
  const float base0 = mx0 == -INFINITY ? 0.0f : mx0 * scale;
  const float base1 = mx1 == -INFINITY ? 0.0f : mx1 * scale;
  alpha0 = dev::ex2(st.m0 * scale - base0);  // old max -inf: 0
  alpha1 = dev::ex2(st.m1 * scale - base1);
  st.m0 = mx0;
  st.m1 = mx1;
  float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    s[4 * j] = dev::ex2(fmaf(s[4 * j], scale, -base0));
    s[4 * j + 1] = dev::ex2(fmaf(s[4 * j + 1], scale, -base0));
    s[4 * j + 2] = dev::ex2(fmaf(s[4 * j + 2], scale, -base1));
    s[4 * j + 3] = dev::ex2(fmaf(s[4 * j + 3], scale, -base1));
    sum0 += s[4 * j] + s[4 * j + 1];
    sum1 += s[4 * j + 2] + s[4 * j + 3];
  }
  st.l0 = fmaf(st.l0, alpha0, sum0);
  st.l1 = fmaf(st.l1, alpha1, sum1);
}

// P (fp32 accumulator layout) -> the A operand of the PV wgmma: k-step kk takes n8 blocks 2kk and
// 2kk + 1, (row r0, row r0 + 8) x (cols 2q, 2q + 1 and 8 + 2q, 9 + 2q).
template <class Cfg>
__device__ __forceinline__ void convert_p(const float (&s)[Cfg::kSRegs], uint32_t (&p)[Cfg::kPRegs]) {
  constexpr bool kBf16 = std::is_same_v<typename Cfg::PvElement, cute::bfloat16_t>;
#pragma unroll
  for (int kk = 0; kk < Cfg::kBlockN / 16; ++kk) {
    p[4 * kk] = dev::pack2<kBf16>(s[8 * kk], s[8 * kk + 1]);
    p[4 * kk + 1] = dev::pack2<kBf16>(s[8 * kk + 2], s[8 * kk + 3]);
    p[4 * kk + 2] = dev::pack2<kBf16>(s[8 * kk + 4], s[8 * kk + 5]);
    p[4 * kk + 3] = dev::pack2<kBf16>(s[8 * kk + 6], s[8 * kk + 7]);
  }
}

template <class Cfg>
__device__ __forceinline__ void rescale_o(float (&o)[Cfg::kORegs], float alpha0, float alpha1) {
#pragma unroll
  for (int j = 0; j < Cfg::kHeadVo / 8; ++j) {
    o[4 * j] *= alpha0;
    o[4 * j + 1] *= alpha0;
    o[4 * j + 2] *= alpha1;
    o[4 * j + 3] *= alpha1;
  }
}

// Stores the thread's two rows (those in [q_begin, q_end)) of the normalised output.
template <class Cfg, bool kBf16>
__device__ __forceinline__ void store_rows(const Fa3Args& a, const ItemInfo& info, const float (&o)[Cfg::kORegs],
                                           int row0, int quad, float inv0, float inv1) {
  const int q0 = info.q_end - kBlockM + row0;  // request row of tile row row0
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int q = q0 + 8 * h;
    if (q < info.q_begin) continue;
    const float inv = h == 0 ? inv0 : inv1;
    const int64_t row = static_cast<int64_t>(info.q_row0 + q) * a.num_qo_heads + info.qo_head;
    // 16-bit output: element (row, 8j + 2 quad) starts the thread's pair of block j.
    uint32_t* dst = static_cast<uint32_t*>(a.out) + (row * Cfg::kHeadVo + 2 * quad) / 2;
#pragma unroll
    for (int j = 0; j < Cfg::kHeadVo / 8; ++j) {
      dst[4 * j] = dev::pack2<kBf16>(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
    }
  }
}

template <class Cfg>
__device__ __forceinline__ void run_consumer(const Fa3Args& a, const SmemMap<Cfg>& sm, int wg, int t) {
  using G = Gmma<Cfg>;
  const int warp = t / 32;
  const int lane = t % 32;
  const int quad = lane % 4;
  const int row0 = wg * 64 + warp * 16 + lane / 4;  // tile row of o[4j], o[4j + 1]; row0 + 8: o[4j + 2, 3]
  const uint32_t q_rows_offset = wg * 64 * kSwizzleBytes;  // this warpgroup's rows of a Q buffer
  const bool causal = a.causal != 0;
  const float scale = a.scale_log2;
  const int my_turn = kSchedulerBarrier + wg;
  const int next_turn = kSchedulerBarrier + (wg ^ 1);
  const bool leader = t == 0;  // arrives on the pipeline barriers for the warpgroup
  const int v_shift = v_block_shift<Cfg::kBlockN>(a);

  // Warpgroup 0 issues first.
  if (wg == 1) dev::named_arrive(kSchedulerBarrier, 256);

  float s[Cfg::kSRegs];
  float o[Cfg::kORegs];
  uint32_t p[Cfg::kPRegs];
  uint32_t item = 0;  // running item count (Q stage / parity)
  uint32_t tile = 0;
  for (int index = blockIdx.x; index < a.num_items; index += gridDim.x) {
    const uint32_t qs = item % Cfg::kQStages;
    dev::mbar_wait(sm.q_full(qs), (item / Cfg::kQStages) & 1);
    ++item;
    const ItemInfo info = load_item<Cfg::kBlockN>(a, read_item(sm.item(qs), lane));
    const int n = info.num_tiles;
    const uint32_t q_rows = sm.q(qs) + q_rows_offset;
#pragma unroll
    for (int i = 0; i < Cfg::kORegs; ++i) o[i] = 0.0f;
    RowState st{-INFINITY, -INFINITY, 0.0f, 0.0f};
    float alpha0 = 1.0f, alpha1 = 1.0f;

    // (cp.async-filled stages need no proxy fence before wgmma reads them: the mbarrier completion
    // orders them, as in CUTLASS's cp.async warp-specialized mainloops.)
    auto wait_k = [&](uint32_t g) { dev::mbar_wait(sm.k_full(sm.stage(g)), sm.parity(g)); };
    auto wait_v = [&](uint32_t g) { dev::mbar_wait(sm.v_full(sm.stage(g)), sm.parity(g)); };

    if (n > 0) {
      // Tile 0: S only.
      dev::named_sync(my_turn, 256);
      wait_k(tile);
      dev::wgmma_fence();
      G::qk(q_rows, sm.k(sm.stage(tile)), s);
      dev::wgmma_commit();
      dev::named_arrive(next_turn, 256);
      dev::wgmma_wait<0>();
      dev::fence_regs(s);
      if (n == 1 && lane == 0) dev::mbar_arrive(sm.q_empty(qs));
      if (leader) dev::mbar_arrive(sm.k_empty(sm.stage(tile)));
      softmax_tile<Cfg>(s, st, info, 0, row0, quad, causal, scale, alpha0, alpha1);
      convert_p<Cfg>(s, p);

      // Tiles 1 .. n-1: S of tile i, then PV of tile i - 1, overlapping tile i's softmax.
      for (int i = 1; i < n; ++i) {
        const uint32_t gk = tile + i;
        const uint32_t gv = gk - 1;
        dev::named_sync(my_turn, 256);
        wait_k(gk);
        // (V before the fence: a wait between the two GEMMs made ptxas fence the PV GEMM again.)
        wait_v(gv);
        dev::wgmma_fence();
        G::qk(q_rows, sm.k(sm.stage(gk)), s);
        dev::wgmma_commit();
        G::pv(p, sm.v(sm.stage(gv)), v_shift, o);
        dev::wgmma_commit();
        dev::named_arrive(next_turn, 256);
        dev::wgmma_wait<1>();
        dev::fence_regs(s);
        if (i == n - 1 && lane == 0) dev::mbar_arrive(sm.q_empty(qs));
        if (leader) dev::mbar_arrive(sm.k_empty(sm.stage(gk)));
        softmax_tile<Cfg>(s, st, info, i, row0, quad, causal, scale, alpha0, alpha1);
        dev::wgmma_wait<0>();
        dev::fence_regs(o);
        dev::fence_regs(p);
        if (leader) dev::mbar_arrive(sm.v_empty(sm.stage(gv)));
        rescale_o<Cfg>(o, alpha0, alpha1);
        convert_p<Cfg>(s, p);
      }

      // PV of the last tile.
      const uint32_t gl = tile + n - 1;
      wait_v(gl);
      dev::wgmma_fence();
      G::pv(p, sm.v(sm.stage(gl)), v_shift, o);
      dev::wgmma_commit();
      dev::wgmma_wait<0>();
      dev::fence_regs(o);
      dev::fence_regs(p);
      if (leader) dev::mbar_arrive(sm.v_empty(sm.stage(gl)));
      tile += n;
    } else if (lane == 0) {
      dev::mbar_arrive(sm.q_empty(qs));
    }

    // Epilogue: the four threads of a row hold its partial sums.
    st.l0 += __shfl_xor_sync(0xffffffffu, st.l0, 1);
    st.l1 += __shfl_xor_sync(0xffffffffu, st.l1, 1);
    st.l0 += __shfl_xor_sync(0xffffffffu, st.l0, 2);
    st.l1 += __shfl_xor_sync(0xffffffffu, st.l1, 2);
    const float inv0 = st.l0 > 0.0f ? a.out_scale / st.l0 : 0.0f;
    const float inv1 = st.l1 > 0.0f ? a.out_scale / st.l1 : 0.0f;
    if (a.out_type == OutType::bf16) {
      store_rows<Cfg, true>(a, info, o, row0, quad, inv0, inv1);
    } else {
      store_rows<Cfg, false>(a, info, o, row0, quad, inv0, inv1);
    }
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// ------------------------------------------------------------------------------------------------
// The kernel.
// ------------------------------------------------------------------------------------------------
template <class Cfg>
__global__ void __launch_bounds__(kThreads, 1) fa3_prefill_kernel(const __grid_constant__ Fa3Args args) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const SmemMap<Cfg> sm{dev::smem_addr(smem_raw)};
  if ((sm.addr & 1023) != 0) __trap();  // the swizzle atoms and descriptors assume it
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) {
    // Arrivals that fill a stage: one (the issuer's expect_tx; a page-aligned gather: lane 0 after its
    // warp's cp.async arrivals) or every producer thread (per-row gathers; fp8 widening of V).
    const uint32_t loaded = args.paged && !page_aligned(args) ? 128 : 1;
    for (uint32_t qs = 0; qs < Cfg::kQStages; ++qs) {
      dev::mbar_init(sm.q_full(qs), 1);
      dev::mbar_init(sm.q_empty(qs), 8);  // lane 0 of each consumer warp
    }
    for (uint32_t s = 0; s < Cfg::kStages; ++s) {
      dev::mbar_init(sm.k_full(s), loaded);
      dev::mbar_init(sm.v_full(s), Cfg::kFp8 ? 128 : loaded);
      dev::mbar_init(sm.k_empty(s), 2);
      dev::mbar_init(sm.v_empty(s), 2);
      if constexpr (Cfg::kFp8) dev::mbar_init(sm.v_raw_full(s), loaded);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  pdl_wait();
  const int warpgroup = tid / 128;
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Cfg::kProducerRegs));
    run_producer<Cfg>(args, sm, tid);
    pdl_launch_dependents();
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Cfg::kConsumerRegs));
    run_consumer<Cfg>(args, sm, warpgroup - 1, tid % 128);
    pdl_launch_dependents();
  }
#else
  (void)args;
  __trap();  // fa3 needs sm_90a (wgmma, setmaxnreg); fa3_available refuses other devices
#endif
}

// ------------------------------------------------------------------------------------------------
// Host side: one instantiation per call site (the per-head-dim translation units).
// ------------------------------------------------------------------------------------------------
template <class Cfg>
cudaError_t launch_config(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch) {
  if (!params.paged) {
    cudaError_t status = encode_token_major_map(&args.tma_k, params.ragged.k, params.kv_dtype, params.num_kv_heads,
                                                Cfg::kHeadQk, Cfg::kBlockN);
    if (status != cudaSuccess) return status;
    status = encode_token_major_map(&args.tma_v, params.ragged.v, params.kv_dtype, params.num_kv_heads, Cfg::kHeadVo,
                                    Cfg::kBlockN);
    if (status != cudaSuccess) return status;
  }
  void (*kernel)(Fa3Args) = fa3_prefill_kernel<Cfg>;
  const cudaError_t status = ensure_smem_limit<fa3_prefill_kernel<Cfg>>(Cfg::kSmemBytes);
  if (status != cudaSuccess) return status;
  return launch_kernel(kernel, dim3(static_cast<unsigned>(launch.grid), 1, 1), dim3(kThreads, 1, 1), Cfg::kSmemBytes,
                       launch.stream, launch.pdl, args);
}

// The instantiations of one head-dim pair: bf16, fp16 and (head dims 128 and 256) fp8_e4m3.
template <int kDqk, int kDvo>
cudaError_t launch_dims(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch) {
  constexpr int kN = block_n(kDqk);
  switch (params.q_dtype) {
    case DType::bfloat16: return launch_config<Fa3Config<cute::bfloat16_t, kDqk, kDvo, kN>>(args, params, launch);
    case DType::float16: return launch_config<Fa3Config<cute::half_t, kDqk, kDvo, kN>>(args, params, launch);
    case DType::fp8_e4m3:
      if constexpr (kDqk % 128 == 0 && kDvo % 128 == 0) {  // fp8 rows in whole 128-byte swizzle rows
        return launch_config<Fa3Config<cute::float_e4m3_t, kDqk, kDvo, kN>>(args, params, launch);
      }
      return cudaErrorInvalidValue;
    default: return cudaErrorInvalidValue;
  }
}

// Ragged 16-bit inputs on the wide tiles of kN keys (prefill_fa3.hpp: kWideBlockN, kHead256WideBlockN).
template <int kDqk, int kDvo, int kN>
cudaError_t launch_wide(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch) {
  switch (params.q_dtype) {
    case DType::bfloat16: return launch_config<Fa3Config<cute::bfloat16_t, kDqk, kDvo, kN>>(args, params, launch);
    case DType::float16: return launch_config<Fa3Config<cute::half_t, kDqk, kDvo, kN>>(args, params, launch);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace kbench::kernels::prefill_fa3
