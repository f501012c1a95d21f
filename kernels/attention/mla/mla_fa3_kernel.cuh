// kbench's MLA decode kernel "fa3" for Hopper (sm_90a): wgmma from shared memory, a producer
// warpgroup that loads the paged latent cache (TMA boxes, or cp.async gathers) completing on
// mbarriers, two consumer warpgroups that each own half of the 512-wide V / output and share every
// tile (lockstep) or score alternate tiles (FlashMLA's "seesaw" schedule). bfloat16 caches, or fp8
// e4m3 caches widened to bf16 in shared memory as tiles are taken (exact; kpe times kpe_scale /
// ckv_scale), with bfloat16 or fp8 e4m3 q; head dims 512 (ckv, = V) / 64 (kpe). FlashMLA's sm90
// decode is the model.
//
// 384 threads a CTA, which works on segments: 64 query rows of one request (row j = token i *
// num_heads + head h: the request's rows in memory order, several tokens may share a CTA; rows past
// the request's last are computed on zeros and never stored) and a range of that request's keys,
// visible to the block's last row. The latent cache is read once per row block, every tile serving
// as K (576 wide) and as V (its first 512 columns). Two variants (mla_split.hpp's plans):
//  * uniform: grid (num_splits, row_blocks, batch), one segment a CTA, keys [split * split_keys, ...);
//  * balanced: one CTA a part of the schedule (an SM), its segments in turn (some requests split
//    over two parts, their partials merged; a request's row blocks on consecutive CTAs with the
//    same keys, as in the uniform grid, so that they share each tile in L2): Q is reloaded for each
//    segment once both consumer warpgroups have released the previous one's (q_empty, after each
//    one's last S GEMM), the KV ring runs on across segments.
//
// Shared memory (1024-byte aligned, 128-byte swizzle: [64-element column chunk][64 rows][128 B], the
// layout wgmma descriptors read K-major, and MN-major for V):
//   Q [9 chunks][64 rows] (q_nope | q_pe, 72 KB), a 2-stage ring of KV tiles [9 chunks][64 keys]
//   (ckv | kpe, 72 KB each), one P tile [64 rows][64 keys] bf16 (8 KB), each warpgroup's latest tile's
//   row maxima and rescale factors, the row sums of the two warpgroups (two segments' worth),
//   mbarriers (a kv_full per chunk of a stage): 226 KB, one CTA per SM.
// Warp roles:
//  * producer (warpgroup 0, setmaxnreg 56): cp.async of Q (zero-filled past the request's rows,
//    arrivals on q_full), then per 64-key tile: wait for the stage to be free (lockstep: kv_empty;
//    seesaw: its parts, see below). On pages of whole tiles (page_size a multiple of 64) a tile
//    inside the request's keys is one page's 64 rows: thread 0 loads it by nine TMA boxes (ckv
//    chunks [64 rows][128 B] 0..7, then kpe), each chunk's bytes expected on its own kv_full, so S
//    starts on the first chunk to land (thread 0 arrives for the whole warpgroup). Other tiles
//    (other page sizes, the tile holding the request's last key): warp w copies keys [16 w, 16 w +
//    16) whole (a key's 1024-byte ckv row by two coalesced 512-byte instructions, its kpe row by 8
//    lanes; keys past the range zero-filled), each thread's copies arriving on every chunk's kv_full
//    as they land. The warp's page-table entries for tile t + 1 (one per lane) are read while tile t
//    is issued. fp8 caches: the tile's 36 KB of e4m3 land in
//    the stage's upper half the same two ways (on raw_full, a barrier per box) and are widened in
//    place front to back (Widen) as the tile is taken: seesaw: by the warpgroup that scores it;
//    lockstep: chunks 0..3 by the producer, arriving on their kv_full, chunks 4..8 by both consumer
//    warpgroups (a widening all by the producer sits between a stage's release and its refill).
//    fp8 q is widened as it is staged.
//  * consumers (warpgroups 1 and 2, setmaxnreg 224), warpgroup w owning output columns [256 w,
//    256 w + 256), on one of two schedules (each variant above on each), by the rows of a request:
//  * lockstep, where a request has fewer than 64 rows (memory-bound: a tile's stage frees as soon as
//    both warpgroups are done with it, keeping two tiles in flight; mla_fa3.cu sends blocks of at
//    most 16 rows to the transposed kernels instead, keys on wgmma's M), per tile:
//      S = Q K^T on wgmma 64 x 32 x 576: warpgroup w takes keys [32 w, 32 w + 32) (both read all of
//      Q), chunk by chunk as they land; mask; the warpgroups exchange their row maxima through
//      shared memory (named barrier), so both keep the same running max and rescale factors; P =
//      2^(s - m) as bf16 into shared memory (fence.proxy.async, named barrier); O = alpha O + P V on
//      wgmma 64 x 256 x 64; the stage is released when both warpgroups' GEMMs on it are done. A
//      warpgroup's PV of tile t has completed before it reaches the max exchange of tile t + 1,
//      which is what lets one P buffer and one max buffer serve every tile.
//  * seesaw, otherwise (compute-bound): warpgroup w scores tiles w, w + 2, ... (S = Q K^T on wgmma
//    64 x 64 x 576, Q read once a tile: a third less shared-memory traffic than lockstep's S).
//    Per own tile t:
//      1. S(t), chunk by chunk as the chunks land;
//      2. once the other warpgroup published tile t - 1 (mbarrier "ready"): O *= alpha(t - 1),
//         O += P(t - 1) V(t - 1) from the shared P tile (SS), left running behind S(t);
//      3. mask (the row's causal bound kv_len - s_qo + 1 + i and the split end, only on tiles that
//         reach it), m(t) = max(m(t - 1), row max), alpha(t) = 2^(m(t - 1) - m(t)), P(t) = 2^(s - m(t));
//      4. PV(t - 1) done (the P tile is free; release stage t - 1): P(t) as bf16, alpha(t) and m(t)
//         to shared memory for the other warpgroup, "ready";
//      5. O *= alpha(t), O += P(t) V(t) with P(t) as A fragments in registers (RS); then stage t is
//         released.
//    fp8 KV (seesaw_fp8): step 2 comes first and the owner's widening of tile t runs under it (the
//    consumers' instructions, not the tensor cores, bound that variant); bf16 keeps S(t) first.
//    One warpgroup's GEMMs run while the other does its softmax; the max chain m(t - 1) -> m(t) is
//    the only serial dependency between tiles. "ready" of tile t + 2 needs the other's "ready" of
//    t + 1, which comes after it read P(t), alpha(t), m(t): one P tile and one max / factor buffer
//    a warpgroup serve every tile. A warpgroup's row sum covers its own tiles, rescaled by every
//    tile's alpha. A stage frees in parts, each on its own mbarrier: kpe once the owner's S(t) is
//    done (kpe_empty), each V half once its warpgroup's PV(t) is (half_empty); tile t + 2 (same
//    owner) loads part by part as they free and its S takes the chunks in that order (kpe, the
//    owner's half, the other's). The other warpgroup's PV(t) runs only after its S(t + 1), which
//    waits for tile t + 1 to land: about one tile in flight, why blocks of few rows go lockstep.
// End: the warpgroups add their row sums; o = ckv_scale * O / l as bf16 (a segment covering its
// request's keys), or the normalised partial O and the log2-sum-exp for mla_split's merge.
//
// One variant a translation unit (mla_fa3_{uniform,balanced}{,_seesaw,_seesaw_fp8}.cu); mla_fa3.cu is
// the host side.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/attention/mla/mla_fa3.hpp"
#include "kernels/attention/mla/mla_fp8.cuh"
#include "kernels/common/hopper.cuh"
#include "kernels/common/launch.hpp"
#include "kernels/common/mma_sm80.cuh"
#include "kernels/common/pdl.cuh"
#include "kernels/common/smem_vector.cuh"

namespace kbench::kernels {
namespace mla_fa3_detail {

constexpr int kDc = 512;            // latent (ckv) dim = V dim = output dim
constexpr int kDp = 64;             // rope (kpe) dim
constexpr int kRows = 64;           // query rows per CTA: one wgmma M
constexpr int kTile = 64;           // keys per KV tile
constexpr int kChunks = 9;          // 64-element (128-byte) column chunks of a 576-wide row
constexpr int kChunkCols = 64;      // elements of a column chunk
constexpr int kChunkBytes = 64 * 128;  // one column chunk of 64 rows
constexpr int kBlockBytes = kChunks * kChunkBytes;  // Q, or one KV stage: 72 KB
constexpr int kStages = 2;
constexpr int kThreads = 384;
constexpr int kProducerThreads = 128;  // warpgroup 0; the consumers are warpgroups 1 and 2
constexpr int kProducerRegs = 56;
constexpr int kConsumerRegs = 224;
static_assert(128 * kProducerRegs + 256 * kConsumerRegs <= kThreads * (65536 / kThreads / 8 * 8), "register pool");
// Named barriers (0 is __syncthreads), 256 consumer threads each.
constexpr int kSumBarrier = 1;     // row sums written, at a segment's end
constexpr int kMaxBarrier = 2;     // lockstep: the tile's row maxima written
constexpr int kPReadyBarrier = 3;  // lockstep: the tile's P written

struct Layout {
  static constexpr int q = 0;
  static constexpr int kv = q + kBlockBytes;
  static constexpr int p = kv + kStages * kBlockBytes;
  // Each consumer warpgroup's latest published tile: [warpgroup][maxima, rescale factors][64 rows] fp32
  // (a warpgroup writes only its own half, so its threads never overwrite what others still read).
  static constexpr int tile_stats = p + kRows * 128;
  static constexpr int row_sum = tile_stats + 2 * 2 * kRows * 4;  // [segment parity][2 warpgroups][64 rows]
  // q_full, kv_full[stage][chunk], kv_empty[stage], q_empty, ready[2], raw_full[stage][box], widened[2],
  // half_empty[stage][2], kpe_empty[stage]
  static constexpr int bars = row_sum + 2 * 2 * kRows * 4;
  static constexpr int bytes = bars + 8 * (6 + kStages * (kChunks + 1 + 5 + 3));
};
static_assert(Layout::bytes <= 227 * 1024, "shared memory per block");

// fp8 KV: a tile's e4m3 bytes land in the upper half of its stage (ckv as four 128-column boxes
// [64 keys][128 B], 128-byte swizzled; kpe [64 keys][64 B]) and are widened in place to the stage's
// bf16 layout, front to back (see Widen).
constexpr int kRawBoxBytes = kTile * 128;                     // 128 ckv columns of a tile's keys
constexpr int kRawCkv = kBlockBytes / 2;                      // stage offset of the raw ckv boxes
constexpr int kRawKpe = kRawCkv + kDc / 128 * kRawBoxBytes;  // and of the raw kpe rows
static_assert(kRawKpe + kTile * kDp == kBlockBytes, "the raw tile fills the stage's upper half");
constexpr int kRawBoxes = kDc / 128 + 1;  // each landing on its own raw_full barrier
// The named barrier of the lockstep consumers' fp8 widening (a step's reads done, the tile written).
// The seesaw's warpgroups widen alone and sync on their own mbarrier (Barriers::widened):
// compute-sanitizer's racecheck loses track of 128-thread named barriers beside the 256-thread one
// at the segment's end and reports hazards on the row sums.
constexpr int kConsumerWidenBarrier = 4;

// The launch arguments: mla_split's, and the latent cache's tensor maps where pages hold whole tiles.
struct Args : MlaKernelArgs {  // q: bfloat16, or fp8 e4m3 with fp8 KV; ckv and kpe: bfloat16 or fp8 e4m3 (kv_fp8)
  // (page_tma) bf16: ckv [rows][8 chunks][64], box [1 chunk][64 rows][128 B]; kpe [rows][64], box
  // [64 rows][128 B]. fp8: ckv [rows][4 boxes][128], box [1][64 rows][128 B]; kpe [rows][64 B], box
  // [64 rows][64 B] unswizzled.
  CUtensorMap ckv_map;
  CUtensorMap kpe_map;
  int page_tma;         // 1: page_size is a multiple of kTile and the maps are set
};

// The consumer warpgroups' schedule (the header): lockstep for blocks of few rows (memory-bound:
// the stage of a tile frees as soon as both are done with it), seesaw otherwise (compute-bound);
// seesaw_fp8 is the seesaw on fp8 KV, where each warpgroup widens its own tile: it issues the other's
// PV of the tile before first, so that the widening runs under it (bf16 issues its S first).
enum class Schedule { lockstep, seesaw, seesaw_fp8 };

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using namespace ::kbench::kernels::hopper;

// Byte offset of 16-byte chunk `chunk` (0..71) of row `row` in a swizzled [9][64][128 B] block.
__device__ __forceinline__ uint32_t swizzled(int row, int chunk) {
  return (chunk >> 3) * kChunkBytes + row * 128 + (((chunk & 7) ^ (row & 7)) << 4);
}

struct Barriers {
  uint32_t base;
  __device__ uint32_t q_full() const { return base; }
  // Column chunk `chunk` of stage `s` landed (the S GEMM starts on the first chunks).
  __device__ uint32_t kv_full(int s, int chunk) const { return base + 8 * (1 + s * kChunks + chunk); }
  __device__ uint32_t kv_empty(int s) const { return base + 8 * (1 + kStages * kChunks + s); }
  __device__ uint32_t q_empty() const { return base + 8 * (1 + kStages * kChunks + kStages); }
  // Consumer warpgroup w published a tile (its P, maxima and factors): every thread arrives.
  __device__ uint32_t ready(int w) const { return base + 8 * (2 + kStages * kChunks + kStages + w); }
  // fp8 KV: raw box `box` (ckv 0..3, kpe 4) of stage `s`'s tile landed (every producer thread arrives).
  __device__ uint32_t raw_full(int s, int box) const {
    return base + 8 * (4 + kStages * kChunks + kStages + s * kRawBoxes + box);
  }
  // fp8 KV, seesaw: consumer warpgroup w's sync of its widening steps (every thread arrives, each
  // use a phase).
  __device__ uint32_t widened(int w) const { return base + 8 * (4 + kStages * kChunks + kStages * (1 + kRawBoxes) + w); }
  // Seesaw: stage `s`'s parts free: warpgroup w's V half (chunks 4 w .. 4 w + 3) once its PV on the
  // tile is done (its 128 threads arrive), kpe (chunk 8) once the owner's S is (a lane of each warp).
  __device__ uint32_t half_empty(int s, int w) const {
    return base + 8 * (6 + kStages * (kChunks + 1 + kRawBoxes) + 2 * s + w);
  }
  __device__ uint32_t kpe_empty(int s) const { return base + 8 * (6 + kStages * (kChunks + 3 + kRawBoxes) + s); }
};

// The request's rows [j0, j0 + 64) and keys [k_begin, k_end) of one segment of this CTA's work, and
// where its output goes: out (slot -1) or partial `slot` of the request's split rows.
struct Block {
  int b;
  int j0;
  int kv_len;
  int k_begin;
  int k_end;
  int num_tiles;
  int slot;
};

// Unit `unit` (request unit / row_blocks, its row block unit % row_blocks), keys [k_begin, k_limit)
// clipped to what the block's last row sees (none: num_tiles 0).
__device__ __forceinline__ Block make_block(const Args& a, int unit, int k_begin, int k_limit, int slot) {
  Block blk;
  blk.b = unit / a.row_blocks;
  blk.j0 = (unit % a.row_blocks) * kRows;
  blk.kv_len = a.kv_len[blk.b];
  const int j_last = min(blk.j0 + kRows, a.rows) - 1;
  blk.k_begin = k_begin;
  blk.k_end = min(min(blk.kv_len, blk.kv_len - a.s_qo + 1 + j_last / a.num_heads), k_limit);
  blk.num_tiles = blk.k_end > blk.k_begin ? (blk.k_end - blk.k_begin + kTile - 1) / kTile : 0;
  blk.slot = slot;
  return blk;
}

// This CTA's segments: one from its grid position (the uniform plan: split blockIdx.x of request
// blockIdx.z, row block blockIdx.y), or part blockIdx.x's of a balanced schedule. The uniform
// variant's single segment is a compile-time count, so its code is the one-segment kernel's.
template <bool kBalanced>
struct Segments {
  int first = 0;
  int count = 1;

  __device__ explicit Segments(const Args& a) {
    if constexpr (kBalanced) {
      first = a.part_begin[blockIdx.x];
      count = a.part_begin[blockIdx.x + 1] - first;
    }
  }
  __device__ int size() const {
    if constexpr (kBalanced) return count;
    return 1;
  }
  __device__ Block at(const Args& a, int i) const {
    if constexpr (!kBalanced) {
      const int split = static_cast<int>(blockIdx.x);
      return make_block(a, static_cast<int>(blockIdx.z) * a.row_blocks + static_cast<int>(blockIdx.y),
                        split * a.split_keys, (split + 1) * a.split_keys, a.num_splits == 1 ? -1 : split);
    }
    const MlaSegment s = a.segments[first + i];
    return make_block(a, s.unit, s.k_begin, s.k_end, s.slot);
  }
};

// The uniform grid's empty split (split 0 never is: every row sees key 0): its partials get no weight
// in the merge (threads 0 .. 63 mark the block's rows). True where the CTA has nothing else to do.
__device__ __forceinline__ bool is_empty_split(const Args& a, const Block& blk, int tid) {
  if (blk.num_tiles > 0) return false;
  const int64_t part_row0 = (static_cast<int64_t>(blk.b) * a.num_splits + blk.slot) * a.rows + blk.j0;
  if (blk.slot >= 0 && tid < kRows && blk.j0 + tid < a.rows) a.part_lse[part_row0 + tid] = -INFINITY;
  return true;
}

// fp8 q (fp8 KV only), widened to bf16 exactly by plain loads into Q's swizzled layout (zeros past
// the request's rows; q_scale stays in scale_log2): thread tid takes 16 q_nope columns [16 (tid %
// 32), ...) of rows tid / 32 + 4 i and 16 q_pe columns of rows tid / 4 + 32 i.
__device__ __forceinline__ void load_q_fp8(const Args& a, const Block& blk, uint32_t smem, int tid) {
  const auto* q_nope = static_cast<const uint8_t*>(a.q_nope);
  const auto* q_pe = static_cast<const uint8_t*>(a.q_pe);
  const int64_t row0 = static_cast<int64_t>(blk.b) * a.rows + blk.j0;
  const auto stage_piece = [&](int r, int piece, const uint8_t* src) {
    uint4 lo = make_uint4(0u, 0u, 0u, 0u), hi = lo;
    if (blk.j0 + r < a.rows) mla_detail::e4m3x16_to_bf16x16(__ldg(reinterpret_cast<const uint4*>(src)), 1.0f, lo, hi);
    st_shared_v4(smem + Layout::q + swizzled(r, piece), lo);
    st_shared_v4(smem + Layout::q + swizzled(r, piece + 1), hi);
  };
#pragma unroll 4
  for (int i = 0; i < kRows / 4; ++i) {
    const int r = tid / 32 + 4 * i, p = tid % 32;
    stage_piece(r, 2 * p, q_nope + (blk.j0 + r < a.rows ? (row0 + r) * kDc + 16 * p : 0));
  }
#pragma unroll
  for (int i = 0; i < kRows / 32; ++i) {
    const int r = tid / 4 + 32 * i, p = tid % 4;
    stage_piece(r, 64 + 2 * p, q_pe + (blk.j0 + r < a.rows ? (row0 + r) * kDp + 16 * p : 0));
  }
}

// fp8 KV: the 16-byte raw piece g (0..511 of a ckv box, 0..255 of kpe) -> its key and raw piece u
// (0..7 ckv, 0..3 kpe) of the key's row: the 8 threads of a shared-memory phase (g, g + 1, .. g + 7)
// take two keys k and k ^ 5 and four pieces each, so that both the raw loads (pieces u ^ (key & 7))
// and the bf16 stores (pieces 2 (u % 4) + j ^ (key & 7)) of a phase fall on 8 distinct bank groups.
struct RawPiece {
  int key;
  int u;
};

__device__ __forceinline__ RawPiece raw_piece(int g) {
  const int t = g % 128, hi = g / 128;
  const int key = ((8 * (t / 16) + 2 * ((t / 8) & 1)) ^ (5 * ((t / 4) & 1))) ^ (hi & 1);
  return {key, t % 4 + 4 * (hi >> 1)};
}

// fp8 KV: widening stage `s`'s raw tile in place, by kWideners threads (tid 0 ..), each box once it
// landed (raw_full, phase `parity`): ckv box q becomes bf16 chunks 2q and 2q + 1 ([16 KB q, 16 KB q
// + 16 KB)), kpe chunk 8 (times kpe_mul). Raw box q sits at 36 KB + 8 KB q, so the front (boxes 0
// and 1 -> chunks 0..3) writes below every raw byte; the back reads boxes 2, 3 and kpe into
// registers and writes chunks 4..8 only after ready() (boxes 0 and 1 read by whoever widened the
// front) and sync() (the back's threads' reads). Every thread fences its writes for wgmma.
template <int kWideners>
struct Widen {
  static constexpr int kCkvPieces = kTile * 128 / 16 / kWideners;  // a thread's pieces of a ckv box
  static constexpr int kKpePieces = kTile * kDp / 16 / kWideners;
  static_assert(kCkvPieces * kWideners == kTile * 8 && kKpePieces * kWideners == kTile * 4, "whole pieces");
  const Args& a;
  uint32_t stage;
  const Barriers& bars;
  int s;
  uint32_t parity;
  int tid;

  __device__ void read_ckv(int q, uint4 (&raw)[kCkvPieces]) const {
    mbar_wait(bars.raw_full(s, q), parity);
#pragma unroll
    for (int n = 0; n < kCkvPieces; ++n) {
      const RawPiece r = raw_piece(tid + n * kWideners);
      raw[n] = ld_shared_v4(stage + kRawCkv + q * kRawBoxBytes + r.key * 128 + ((r.u ^ (r.key & 7)) << 4));
    }
  }
  __device__ void write_ckv(int q, const uint4 (&raw)[kCkvPieces]) const {
#pragma unroll
    for (int n = 0; n < kCkvPieces; ++n) {
      const RawPiece r = raw_piece(tid + n * kWideners);
      const int piece = 8 * (2 * q + r.u / 4) + 2 * (r.u % 4);  // of the 72 in a bf16 row
      uint4 lo, hi;
      mla_detail::e4m3x16_to_bf16x16(raw[n], 1.0f, lo, hi);
      st_shared_v4(stage + swizzled(r.key, piece), lo);
      st_shared_v4(stage + swizzled(r.key, piece + 1), hi);
    }
  }
  __device__ void front() const {
    uint4 raw[kCkvPieces];
#pragma unroll 1
    for (int q = 0; q < 2; ++q) {
      read_ckv(q, raw);
      write_ckv(q, raw);
    }
    fence_proxy_async();
  }
  template <class Ready, class Sync>
  __device__ void back(Ready ready, Sync sync) const {
    uint4 raw2[kCkvPieces], raw3[kCkvPieces], kpe[kKpePieces];
    read_ckv(2, raw2);
    read_ckv(3, raw3);
    mbar_wait(bars.raw_full(s, kRawBoxes - 1), parity);
#pragma unroll
    for (int n = 0; n < kKpePieces; ++n) {
      const RawPiece r = raw_piece(tid + n * kWideners);
      kpe[n] = ld_shared_v4(stage + kRawKpe + r.key * kDp + 16 * r.u);
    }
    ready();
    sync();  // every raw byte read: chunks 4..8 overwrite them
    write_ckv(2, raw2);
    write_ckv(3, raw3);
#pragma unroll
    for (int n = 0; n < kKpePieces; ++n) {
      const RawPiece r = raw_piece(tid + n * kWideners);
      uint4 lo, hi;
      mla_detail::e4m3x16_to_bf16x16(kpe[n], a.kpe_mul, lo, hi);
      st_shared_v4(stage + swizzled(r.key, 64 + 2 * r.u), lo);
      st_shared_v4(stage + swizzled(r.key, 64 + 2 * r.u + 1), hi);
    }
    fence_proxy_async();
  }
};

// A gathered tile's keys of warp `warp`, [16 warp, 16 warp + 16): f(key, its cache row), the row from
// lane k's my_row (-1 past the range: the key is zero-filled).
template <class F>
__device__ __forceinline__ void for_each_warp_key(int64_t my_row, int warp, F f) {
#pragma unroll 4
  for (int k = 0; k < 16; ++k) f(warp * 16 + k, __shfl_sync(0xffffffffu, my_row, k));
}

// The cache row of key 16 warp + (lane % 16) of the block's tile `tile` (pages: the request's page
// ids); -1 past the block's keys.
__device__ __forceinline__ int64_t tile_cache_row(const Args& a, const Block& blk, const int32_t* pages, int tile,
                                                  int warp, int lane) {
  const int t = blk.k_begin + tile * kTile + warp * 16 + (lane & 15);
  return t < blk.k_end ? static_cast<int64_t>(__ldg(pages + t / a.page_size)) * a.page_size + t % a.page_size
                       : int64_t{-1};
}

// Whether the block's tile `tile` loads by TMA boxes: pages of whole tiles (Args::page_tma), every
// key of the tile below kv_len (the rows past it may hold anything: such a tile is gathered,
// zero-filled).
__device__ __forceinline__ bool loads_by_tma(const Args& a, const Block& blk, int tile) {
  return a.page_tma != 0 && blk.k_begin + (tile + 1) * kTile <= blk.kv_len;
}

// A producer buffer's full barrier counts kProducerThreads arrivals, gathered (each producer thread's
// copies arrive) or loaded by TMA boxes: then thread 0 arrives with the transaction bytes and for
// its warp's other lanes (kTmaIssuerArrivals), and lane 0 of each other producer warp for its warp,
// every warp once it has seen the buffer free. Every producer thread waits for every buffer (a
// gathered tile's writers must), and these arrivals keep a thread that only waits from falling a
// phase behind: the consumers cannot free the buffer again before all have seen it free. (With
// thread 0 arriving for all, a waiting warp could miss the phase and wait on its parity forever:
// fa3's bf16 random-length decode hung in most runs of some calls, session 41.)
constexpr uint32_t kTmaIssuerArrivals = 32;
__device__ __forceinline__ void arrive_seen_free(uint32_t full, int tid) {
  __syncwarp();
  if (tid % 32 == 0 && tid != 0) mbar_arrive_count(full, 32);
}

// fp8 KV: the raw bytes of one tile to `raw` (four 128-byte-swizzled ckv boxes [64 keys][128 B],
// then kpe [64 keys][64 B]): by five TMA boxes, box b landing on the mbarrier at raw_full + 8 b (the
// widening starts on the first), on pages of whole tiles, every key inside the request
// (arrive_seen_free), else warp w gathers keys [16 w, 16 w + 16) (a key's 512 ckv bytes by one
// 16-byte copy a lane into the swizzled boxes, its 64 kpe bytes by lanes 0..3; keys past the range
// zero-filled). my_row: the cache row of key 16 warp + lane % 16 (-1 past the range).
__device__ __forceinline__ void load_raw_tile(const Args& a, const Block& blk, uint32_t raw, uint32_t raw_full,
                                              int64_t my_row, int tile, int tid) {
  constexpr int kKpe = kRawKpe - kRawCkv;  // of raw
  if (loads_by_tma(a, blk, tile)) {
    if (tid == 0) {
      for (int q = 0; q < kDc / 128; ++q) {
        mbar_arrive_expect_tx(raw_full + 8 * q, kRawBoxBytes);
        tma_load_4d(raw + q * kRawBoxBytes, &a.ckv_map, raw_full + 8 * q, 0, static_cast<int>(my_row), q, 0);
        mbar_arrive_count(raw_full + 8 * q, kTmaIssuerArrivals - 1);
      }
      const uint32_t kpe_full = raw_full + 8 * (kRawBoxes - 1);
      mbar_arrive_expect_tx(kpe_full, kTile * kDp);
      tma_load_2d(raw + kKpe, &a.kpe_map, kpe_full, 0, static_cast<int>(my_row));
      mbar_arrive_count(kpe_full, kTmaIssuerArrivals - 1);
    }
    for (int box = 0; box < kRawBoxes; ++box) arrive_seen_free(raw_full + 8 * box, tid);
    return;
  }
  const int warp = tid / 32;
  const int lane = tid % 32;
  const auto* ckv_cache = static_cast<const uint8_t*>(a.ckv);
  const auto* kpe_cache = static_cast<const uint8_t*>(a.kpe);
  for_each_warp_key(my_row, warp, [&](int key, int64_t row) {
    const bool valid = row >= 0;
    const uint32_t bytes = valid ? 16u : 0u;
    const uint32_t ckv_dst = raw + (lane / 8) * kRawBoxBytes + key * 128 + (((lane & 7) ^ (key & 7)) << 4);
    cp_async_16(ckv_dst, valid ? ckv_cache + row * kDc + 16 * lane : ckv_cache, bytes);
    if (lane < 4) {
      cp_async_16(raw + kKpe + key * kDp + 16 * lane, valid ? kpe_cache + row * kDp + 16 * lane : kpe_cache, bytes);
    }
  });
  for (int box = 0; box < kRawBoxes; ++box) cp_async_arrive_noinc(raw_full + 8 * box);
}

// The producer's work on one segment; `round` counts the CTA's segments with keys, `it` its tiles.
template <Schedule kSchedule>
__device__ __forceinline__ void produce_segment(const Args& a, const Block& blk, uint32_t smem, const Barriers& bars,
                                                int tid, int round, uint32_t& it) {
  const int warp = tid / 32;
  const int lane = tid % 32;
  const auto* q_nope = static_cast<const __nv_bfloat16*>(a.q_nope);
  const auto* q_pe = static_cast<const __nv_bfloat16*>(a.q_pe);
  const auto* ckv_cache = static_cast<const __nv_bfloat16*>(a.ckv);
  const auto* kpe_cache = static_cast<const __nv_bfloat16*>(a.kpe);
  // Q: thread tid copies ckv chunk tid % 64 of rows tid / 64 + 2 i and kpe chunk tid % 8 of rows
  // tid / 8 + 16 i (consecutive threads, consecutive 16 bytes), once both consumer warpgroups are done
  // with the previous segment's Q.
  if (round > 0) mbar_wait(bars.q_empty(), (round - 1) & 1);
  if (a.q_fp8 != 0) {
    load_q_fp8(a, blk, smem, tid);
    fence_proxy_async();
    mbar_arrive(bars.q_full());
  } else {
    const int64_t row0 = static_cast<int64_t>(blk.b) * a.rows + blk.j0;
#pragma unroll 4
    for (int i = 0; i < kRows / 2; ++i) {
      const int r = tid / 64 + 2 * i, ch = tid % 64;
      const bool valid = blk.j0 + r < a.rows;
      const __nv_bfloat16* src = valid ? q_nope + (row0 + r) * kDc + ch * 8 : q_nope;
      cp_async_16(smem + Layout::q + swizzled(r, ch), src, valid ? 16u : 0u);
    }
#pragma unroll
    for (int i = 0; i < kRows / 16; ++i) {
      const int r = tid / 8 + 16 * i, ch = tid % 8;
      const bool valid = blk.j0 + r < a.rows;
      const __nv_bfloat16* src = valid ? q_pe + (row0 + r) * kDp + ch * 8 : q_pe;
      cp_async_16(smem + Layout::q + swizzled(r, 64 + ch), src, valid ? 16u : 0u);
    }
    cp_async_arrive_noinc(bars.q_full());
  }
  const int32_t* pages = a.kv_indices + a.kv_indptr[blk.b];
  auto cache_row = [&](int tile) { return tile_cache_row(a, blk, pages, tile, warp, lane); };
  int64_t next_row = cache_row(0);
  for (int tile = 0; tile < blk.num_tiles; ++tile, ++it) {
    const int s = it % kStages;
    const int64_t my_row = next_row;
    if (tile + 1 < blk.num_tiles) next_row = cache_row(tile + 1);  // in flight while this tile is issued
    const uint32_t free_parity = ((it / kStages) & 1) ^ 1;
    const uint32_t stage = smem + Layout::kv + s * kBlockBytes;
    // Pages of whole tiles (loads_by_tma): thread 0's row (the tile's first key) starts its page's
    // 64, each chunk one TMA box on its kv_full (arrive_seen_free: every producer thread, once it saw
    // the stage free).
    const bool tma_tile = loads_by_tma(a, blk, tile);
    const auto load_chunk = [&](int chunk) {
      if (tid == 0) {
        mbar_arrive_expect_tx(bars.kv_full(s, chunk), kChunkBytes);
        const CUtensorMap* map = chunk < kChunks - 1 ? &a.ckv_map : &a.kpe_map;
        tma_load_4d(stage + chunk * kChunkBytes, map, bars.kv_full(s, chunk), 0, static_cast<int>(my_row),
                    chunk < kChunks - 1 ? chunk : 0, 0);
        mbar_arrive_count(bars.kv_full(s, chunk), kTmaIssuerArrivals - 1);
      }
      arrive_seen_free(bars.kv_full(s, chunk), tid);
    };
    if constexpr (kSchedule != Schedule::lockstep) {
      // The stage frees part by part (the tile before frees its kpe after its owner's S, each V half
      // after that half's PV): bf16 tiles of whole pages load each part once free, in the order the
      // owner's S takes them (kpe, the owner's half, the other's); others once all are.
      const bool by_parts = kSchedule == Schedule::seesaw && tma_tile;  // bf16 (seesaw_fp8: fp8 KV)
      const int owner = tile & 1;
      mbar_wait(bars.kpe_empty(s), free_parity);
      if (by_parts) load_chunk(kChunks - 1);
      for (int half = 0; half < 2; ++half) {
        const int w = owner ^ half;
        mbar_wait(bars.half_empty(s, w), free_parity);
        if (by_parts) {
          for (int chunk = 4 * w; chunk < 4 * w + 4; ++chunk) load_chunk(chunk);
        }
      }
      if (by_parts) continue;
    } else {
      mbar_wait(bars.kv_empty(s), free_parity);
    }
    if (a.kv_fp8 != 0) {
      load_raw_tile(a, blk, stage + kRawCkv, bars.raw_full(s, 0), my_row, tile, tid);
      if constexpr (kSchedule == Schedule::lockstep) {  // the front, chunks 0..3, for the consumers
        Widen<kProducerThreads>{a, stage, bars, s, (it / kStages) & 1, tid}.front();
        for (int chunk = 0; chunk < 4; ++chunk) mbar_arrive(bars.kv_full(s, chunk));
      }
      continue;
    }
    if (tma_tile) {
      for (int chunk = 0; chunk < kChunks; ++chunk) load_chunk(chunk);
      continue;
    }
    for_each_warp_key(my_row, warp, [&](int key, int64_t row) {
      const bool valid = row >= 0;
      const uint32_t bytes = valid ? 16u : 0u;
      const __nv_bfloat16* ckv = valid ? ckv_cache + row * kDc : ckv_cache;
      cp_async_16(stage + swizzled(key, lane), valid ? ckv + lane * 8 : ckv, bytes);
      cp_async_16(stage + swizzled(key, 32 + lane), valid ? ckv + 256 + lane * 8 : ckv, bytes);
      if (lane < 8) {
        const __nv_bfloat16* kpe = valid ? kpe_cache + row * kDp + lane * 8 : kpe_cache;
        cp_async_16(stage + swizzled(key, 64 + lane), kpe, bytes);
      }
    });
    for (int chunk = 0; chunk < kChunks; ++chunk) cp_async_arrive_noinc(bars.kv_full(s, chunk));
  }
}

template <bool kBalanced, Schedule kSchedule>
__device__ __forceinline__ void run_producer(const Args& a, const Segments<kBalanced>& segs, uint32_t smem,
                                             const Barriers& bars, int tid) {
  int round = 0;
  uint32_t it = 0;
  for (int i = 0; i < segs.size(); ++i) {
    const Block blk = segs.at(a, i);
    if (blk.num_tiles == 0) continue;
    produce_segment<kSchedule>(a, blk, smem, bars, tid, round++, it);
  }
  cp_async_wait_all();
}

namespace gmma = cute::SM90::GMMA;
// S = Q K^T on 64 x kN (K-major operands): each warpgroup's 32 of a tile's 64 keys (lockstep), or a
// warpgroup's own whole tile (seesaw).
template <int kN>
using QkOpN = decltype(gmma::ss_op_selector<cute::bfloat16_t, cute::bfloat16_t, float,
                                            cute::Shape<cute::_64, cute::Int<kN>, cute::_16>, gmma::Major::K,
                                            gmma::Major::K>());
using QkHalfOp = QkOpN<32>;
using QkOp = QkOpN<64>;
// O += P V on a warpgroup's 256 columns (V MN-major): P from the shared P tile (the lockstep
// schedule's; the seesaw's on the other warpgroup's tile), or from registers (the seesaw's own tile).
using PvSharedOp = decltype(gmma::ss_op_selector<cute::bfloat16_t, cute::bfloat16_t, float,
                                                 cute::Shape<cute::_64, cute::_256, cute::_16>, gmma::Major::K,
                                                 gmma::Major::MN>());
using PvRegsOp = decltype(gmma::rs_op_selector<cute::bfloat16_t, cute::bfloat16_t, float,
                                               cute::Shape<cute::_64, cute::_256, cute::_16>, gmma::Major::K,
                                               gmma::Major::MN>());

// Reduces a row's value over the four threads (a quad) that hold it.
template <class Op>
__device__ __forceinline__ float quad_reduce(float v, Op op) {
  v = op(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return op(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

__device__ __forceinline__ void scale_rows(float (&o)[128], float alpha0, float alpha1) {
#pragma unroll
  for (int n = 0; n < 32; ++n) {
    o[4 * n] *= alpha0;
    o[4 * n + 1] *= alpha0;
    o[4 * n + 2] *= alpha1;
    o[4 * n + 3] *= alpha1;
  }
}

// A thread's S fragment of kGroups groups of 8 keys (keys key0 + 8 n + 2 quad, +1, of its rows r0 and
// r0 + 8: sc[4 n ..]) to log2 units, keys at or past a row's end set to -inf where the tile is
// `masked`; mx0 / mx1 (in: a starting value) become the rows' maxima over the quad.
template <int kGroups>
__device__ __forceinline__ void scale_mask_max(float (&sc)[4 * kGroups], float scale_log2, int key0, int quad,
                                               bool masked, int end0, int end1, float& mx0, float& mx1) {
#pragma unroll
  for (int n = 0; n < kGroups; ++n) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int key = key0 + 8 * n + 2 * quad + c;
      sc[4 * n + c] = masked && key >= end0 ? -INFINITY : sc[4 * n + c] * scale_log2;
      sc[4 * n + 2 + c] = masked && key >= end1 ? -INFINITY : sc[4 * n + 2 + c] * scale_log2;
      mx0 = fmaxf(mx0, sc[4 * n + c]);
      mx1 = fmaxf(mx1, sc[4 * n + 2 + c]);
    }
  }
  const auto max_op = [](float x, float y) { return fmaxf(x, y); };
  mx0 = quad_reduce(mx0, max_op);
  mx1 = quad_reduce(mx1, max_op);
}

// The online softmax step to the rows' new maxima mx0 / mx1 (log2 units): alpha = 2^(m - mx), m = mx,
// sc = 2^(sc - mx) in place, l = alpha l + the fragment's row sums. A row with no key yet keeps max
// -inf: it subtracts 0 instead (its P are all 2^-inf = 0).
template <int kGroups>
__device__ __forceinline__ void exponentiate(float (&sc)[4 * kGroups], float mx0, float mx1, float& m0, float& m1,
                                             float& l0, float& l1, float& alpha0, float& alpha1) {
  const float base0 = mx0 == -INFINITY ? 0.0f : mx0;
  const float base1 = mx1 == -INFINITY ? 0.0f : mx1;
  alpha0 = sm80::ex2(m0 - base0);
  alpha1 = sm80::ex2(m1 - base1);
  m0 = mx0;
  m1 = mx1;
  float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
  for (int n = 0; n < kGroups; ++n) {
    sc[4 * n] = sm80::ex2(sc[4 * n] - base0);
    sc[4 * n + 1] = sm80::ex2(sc[4 * n + 1] - base0);
    sc[4 * n + 2] = sm80::ex2(sc[4 * n + 2] - base1);
    sc[4 * n + 3] = sm80::ex2(sc[4 * n + 3] - base1);
    sum0 += sc[4 * n] + sc[4 * n + 1];
    sum1 += sc[4 * n + 2] + sc[4 * n + 3];
  }
  l0 = fmaf(l0, alpha0, sum0);
  l1 = fmaf(l1, alpha1, sum1);
}

// A segment's end, both schedules: the row sums of both warpgroups (both at the final maxima, so
// they add), exchanged in this segment's half of row_sum (the next segment's end writes the other);
// o = ckv_scale * O / l as bf16 (a segment covering its request's keys), or the normalised partial O
// and the log2-sum-exp for mla_split's merge.
__device__ __forceinline__ void finish_segment(const Args& a, const Block& blk, const float (&o)[128], float m0,
                                               float m1, float l0, float l1, float* row_sum, int wg, int t) {
  const int quad = t % 4;
  const int r0 = (t / 32) * 16 + (t % 32) / 4;
  const int other = wg ^ 1;
  l0 = quad_reduce(l0, [](float x, float y) { return x + y; });
  l1 = quad_reduce(l1, [](float x, float y) { return x + y; });
  if (quad == 0) {
    row_sum[wg * kRows + r0] = l0;
    row_sum[wg * kRows + r0 + 8] = l1;
  }
  named_sync(kSumBarrier, 256);
  l0 += row_sum[other * kRows + r0];
  l1 += row_sum[other * kRows + r0 + 8];
  const int64_t part_row0 = (static_cast<int64_t>(blk.b) * a.num_splits + blk.slot) * a.rows + blk.j0;
  const int64_t out_row0 = static_cast<int64_t>(blk.b) * a.rows + blk.j0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = r0 + 8 * h;
    if (blk.j0 + r >= a.rows) continue;
    const float l = h == 0 ? l0 : l1;
    const float m = h == 0 ? m0 : m1;
    const float inv = l > 0.0f ? a.v_scale / l : 0.0f;
    const int col0 = wg * 256 + 2 * quad;
    if (blk.slot < 0) {
      uint32_t* dst = reinterpret_cast<uint32_t*>(a.out + (out_row0 + r) * kDc + col0);
#pragma unroll
      for (int n = 0; n < 32; ++n) dst[4 * n] = pack2<true>(o[4 * n + 2 * h] * inv, o[4 * n + 2 * h + 1] * inv);
    } else {
      float* dst = a.part_o + (part_row0 + r) * kDc + col0;
#pragma unroll
      for (int n = 0; n < 32; ++n) {
        *reinterpret_cast<float2*>(dst + 8 * n) = make_float2(o[4 * n + 2 * h] * inv, o[4 * n + 2 * h + 1] * inv);
      }
      if (wg == 0 && quad == 0) a.part_lse[part_row0 + r] = l > 0.0f ? m + __log2f(l) : -INFINITY;
    }
  }
}

// A consumer warpgroup's work on one segment (`round`, `it` as the producer's): the lockstep
// schedule of the header (both warpgroups on every tile).
template <bool kBalanced>
__device__ __forceinline__ void consume_lockstep(const Args& a, const Block& blk, uint32_t smem, float* shared,
                                                 const Barriers& bars, int wg, int t, int round, uint32_t& it) {
  const int warp = t / 32;
  const int lane = t % 32;
  const int quad = lane % 4;
  const int r0 = warp * 16 + lane / 4;  // block rows of the thread: r0 (accumulators 4 n, 4 n + 1) and r0 + 8
  // Keys each of the two rows sees (rows past the request's: all, they are never stored).
  auto row_end = [&](int r) {
    const int j = blk.j0 + r;
    return j < a.rows ? min(blk.kv_len - a.s_qo + 1 + j / a.num_heads, blk.k_end) : blk.k_end;
  };
  const int end0 = row_end(r0), end1 = row_end(r0 + 8);
  const int mask_from = row_end(0);  // tiles reaching past the block's first row's bound need masks
  float* row_max = shared;           // Layout::tile_stats: [2 warpgroups][64 rows] maxima of the tile
  float* row_sum = shared + 4 * kRows + (round & 1) * 2 * kRows;

  float o[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) o[i] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY;  // running maxima, log2 units
  float l0 = 0.0f, l1 = 0.0f;            // this thread's share of the warpgroup's running sums
  const uint64_t q_desc = smem_desc(smem + Layout::q, 16, 1024);
  const uint64_t p_desc = smem_desc(smem + Layout::p, 16, 1024);
  mbar_wait(bars.q_full(), round & 1);

  for (int tile = 0; tile < blk.num_tiles; ++tile, ++it) {
    const int s = it % kStages;
    const uint32_t stage = smem + Layout::kv + s * kBlockBytes;

    // fp8 KV: both warpgroups widen the tile as they take it (the producer only loads it).
    const bool fp8 = a.kv_fp8 != 0;
    if (fp8) {
      const uint32_t parity = (it / kStages) & 1;
      const auto sync = [] { named_sync(kConsumerWidenBarrier, 256); };
      const auto front_done = [&] {  // the producer widened chunks 0..3 (and read boxes 0 and 1)
        for (int chunk = 0; chunk < 4; ++chunk) mbar_wait(bars.kv_full(s, chunk), parity);
      };
      Widen<256>{a, stage, bars, s, parity, wg * 128 + t}.back(front_done, sync);
      sync();
    }
    // S = Q K^T for keys [32 wg, 32 wg + 32) of the tile, chunk by chunk as the chunks land: 4
    // k-steps of 16 (32 bytes) a chunk.
    float sc[16];
    const uint64_t k_desc = smem_desc(stage + wg * 32 * 128, 16, 1024);
#pragma unroll
    for (int chunk = 0; chunk < kChunks; ++chunk) {
      if (!fp8) mbar_wait(bars.kv_full(s, chunk), (it / kStages) & 1);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const uint32_t off = chunk * kChunkBytes + k * 32;
        gmma_ss<QkHalfOp>(q_desc + (off >> 4), k_desc + (off >> 4), sc, chunk + k > 0,
                          std::make_index_sequence<16>{});
      }
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(sc);
    if constexpr (kBalanced) {
      // The segment's last S GEMM has read Q: the next segment's Q (and then its tiles) may load
      // under this tile's softmax, PV and the epilogue.
      if (tile == blk.num_tiles - 1 && t == 0) mbar_arrive(bars.q_empty());
    }

    const int tile_key0 = blk.k_begin + tile * kTile;
    float mx0 = -INFINITY, mx1 = -INFINITY;
    scale_mask_max<4>(sc, a.scale_log2, tile_key0 + wg * 32, quad, tile_key0 + kTile > mask_from, end0, end1, mx0,
                      mx1);
    if (quad == 0) {
      row_max[wg * kRows + r0] = mx0;
      row_max[wg * kRows + r0 + 8] = mx1;
    }
    named_sync(kMaxBarrier, 256);
    mx0 = fmaxf(fmaxf(mx0, row_max[(wg ^ 1) * kRows + r0]), m0);
    mx1 = fmaxf(fmaxf(mx1, row_max[(wg ^ 1) * kRows + r0 + 8]), m1);
    float alpha0, alpha1;
    exponentiate<4>(sc, mx0, mx1, m0, m1, l0, l1, alpha0, alpha1);
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      // P[row][key], key = 32 wg + 8 n + 2 quad: 16-byte chunk 4 wg + n of the row, swizzled.
      const int chunk = 4 * wg + n;
      const uint32_t p_row0 = smem + Layout::p + r0 * 128 + quad * 4;
      const uint32_t p_row1 = p_row0 + 8 * 128;
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(p_row0 + ((chunk ^ (r0 & 7)) << 4)),
                   "r"(pack2<true>(sc[4 * n], sc[4 * n + 1]))
                   : "memory");
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(p_row1 + ((chunk ^ (r0 & 7)) << 4)),
                   "r"(pack2<true>(sc[4 * n + 2], sc[4 * n + 3]))
                   : "memory");
    }
    fence_proxy_async();  // P's generic-proxy stores, read next by wgmma
    named_sync(kPReadyBarrier, 256);

    // O[:, 256 wg .. +256] = alpha O + P V: V = the tile's chunks 4 wg .. 4 wg + 3, N-major (64-column
    // chunks kChunkBytes apart), 4 k-steps of 16 keys (2048 bytes).
    scale_rows(o, alpha0, alpha1);
    const uint64_t v_desc = smem_desc(stage + 4 * wg * kChunkBytes, kChunkBytes, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
      gmma_ss<PvSharedOp>(p_desc + ((kk * 32) >> 4), v_desc + ((kk * 2048) >> 4), o, true,
                          std::make_index_sequence<128>{});
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(o);
    mbar_arrive(bars.kv_empty(s));  // every thread: its widening writes (fp8) before the refill
  }
  finish_segment(a, blk, o, m0, m1, l0, l1, row_sum, wg, t);
}

// A consumer warpgroup's work on one segment (`round`, `it` as the producer's): the seesaw schedule
// of the header. Iteration `tile` handles the own tile `tile` (if below num_tiles) and the other
// warpgroup's tile - 1.
template <bool kBalanced, bool kFp8>
__device__ __forceinline__ void consume_seesaw(const Args& a, const Block& blk, uint32_t smem, float* shared,
                                                const Barriers& bars, int wg, int t, int round, uint32_t& it,
                                                uint32_t& consumed, uint32_t& widened) {
  const int warp = t / 32;
  const int lane = t % 32;
  const int quad = lane % 4;
  const int r0 = warp * 16 + lane / 4;  // block rows of the thread: r0 (accumulators 4 n, 4 n + 1) and r0 + 8
  const int other = wg ^ 1;
  // Keys each of the two rows sees (rows past the request's: all, they are never stored).
  auto row_end = [&](int r) {
    const int j = blk.j0 + r;
    return j < a.rows ? min(blk.kv_len - a.s_qo + 1 + j / a.num_heads, blk.k_end) : blk.k_end;
  };
  const int end0 = row_end(r0), end1 = row_end(r0 + 8);
  const int mask_from = row_end(0);  // tiles reaching past the block's first row's bound need masks
  const uint32_t it0 = it;           // the ring position of the segment's tile 0
  it += blk.num_tiles;
  auto stage_of = [&](int tile) { return smem + Layout::kv + ((it0 + tile) % kStages) * kBlockBytes; };
  // This warpgroup's PV on `tile` is done: its V half may refill (every thread: its widening writes,
  // fp8, before the refill).
  auto release = [&](int tile) { mbar_arrive(bars.half_empty((it0 + tile) % kStages, wg)); };
  // This warpgroup's V columns [256 wg, 256 wg + 256) of a tile: chunks 4 wg .. 4 wg + 3, N-major
  // (64-column chunks kChunkBytes apart); k-steps of 16 keys are 2048 bytes apart.
  auto v_desc = [&](int tile) { return smem_desc(stage_of(tile) + 4 * wg * kChunkBytes, kChunkBytes, 1024); };
  // `shared` is Layout::tile_stats: the warpgroups' latest tiles' maxima and factors, the row sums.
  float* own_max = shared + wg * 2 * kRows;
  float* own_alpha = own_max + kRows;
  const float* other_max = shared + other * 2 * kRows;
  const float* other_alpha = other_max + kRows;
  float* row_sum = shared + 4 * kRows + (round & 1) * 2 * kRows;

  float o[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) o[i] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY;  // running maxima after the latest tile, log2 units
  float l0 = 0.0f, l1 = 0.0f;            // this thread's share of the sums over the warpgroup's tiles
  const uint64_t q_desc = smem_desc(smem + Layout::q, 16, 1024);
  const uint64_t p_desc = smem_desc(smem + Layout::p, 16, 1024);
  mbar_wait(bars.q_full(), round & 1);
  if constexpr (kBalanced) {
    if (wg >= blk.num_tiles && t == 0) mbar_arrive(bars.q_empty());  // no own tile: done with Q
  }

  // O *= alpha(tile) and O += P V on this warpgroup's columns for the other warpgroup's `tile`
  // (published with its P, maxima and rescale factors; no wgmma on O is in flight), from the shared
  // P tile, committed and left running.
  auto other_pv = [&](int tile) {
    mbar_wait(bars.ready(other), consumed++ & 1);
    const float alpha0 = other_alpha[r0], alpha1 = other_alpha[r0 + 8];
    m0 = other_max[r0];
    m1 = other_max[r0 + 8];
    scale_rows(o, alpha0, alpha1);
    l0 *= alpha0;
    l1 *= alpha1;
    const uint64_t vd = v_desc(tile);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
      gmma_ss<PvSharedOp>(p_desc + ((kk * 32) >> 4), vd + ((kk * 2048) >> 4), o, true,
                          std::make_index_sequence<128>{});
    }
    wgmma_commit();
  };
  // The own tile `tile`, and (kAfterOther) the other warpgroup's tile - 1: behind S(tile), under its
  // softmax (bf16), or ahead of it, under the widening (fp8). The variants keep every wgmma and wait
  // outside data-dependent branches (ptxas serializes the wgmmas otherwise).
  auto own_tile = [&](int tile, auto after_other) {
    constexpr bool kAfterOther = decltype(after_other)::value;
    constexpr bool kPvFirst = kAfterOther && kFp8;
    constexpr bool kPvBehind = kAfterOther && !kFp8;
    float sc[32];
    const uint32_t parity = ((it0 + tile) / kStages) & 1;
    const int s = (it0 + tile) % kStages;
    const uint64_t k_desc = smem_desc(stage_of(tile), 16, 1024);
    if constexpr (kPvFirst) other_pv(tile - 1);
    // fp8 KV: this warpgroup widens its own tile as it takes it (the producer only loads it).
    if constexpr (kFp8) {
      const auto sync = [&] {
        mbar_arrive(bars.widened(wg));
        mbar_wait(bars.widened(wg), widened++ & 1);
      };
      const Widen<128> widen{a, stage_of(tile), bars, s, parity, t};
      widen.front();
      widen.back([] {}, sync);
      sync();
    }
    // 1. S(tile) = Q K^T, chunk by chunk as the chunks land, in the order the stage frees for them
    //    (kpe, this warpgroup's V half, the other's): 4 k-steps of 16 (32 bytes) a chunk.
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const int chunk = i == 0 ? kChunks - 1 : (i <= 4 ? 4 * wg : 4 * other) + (i - 1) % 4;
      if constexpr (!kFp8) mbar_wait(bars.kv_full(s, chunk), parity);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const uint32_t off = chunk * kChunkBytes + k * 32;
        gmma_ss<QkOp>(q_desc + (off >> 4), k_desc + (off >> 4), sc, i + k > 0, std::make_index_sequence<32>{});
      }
    }
    wgmma_commit();
    // 2. The other warpgroup's tile - 1 on the tensor cores behind S(tile) (bf16).
    if constexpr (kPvBehind) other_pv(tile - 1);

    // 3. S(tile) done (fp8: and PV(tile - 1)): mask, the max chain, P.
    wgmma_wait<kPvBehind ? 1 : 0>();
    fence_regs(sc);
    if (lane == 0) mbar_arrive(bars.kpe_empty(s));  // this warp's S(tile) has read the kpe
    if constexpr (kPvFirst) {
      fence_regs(o);
      release(tile - 1);
    }
    if constexpr (kBalanced) {
      // The warpgroup's last S GEMM of the segment has read Q: the next segment's may load.
      if (tile + 2 >= blk.num_tiles && t == 0) mbar_arrive(bars.q_empty());
    }
    const int tile_key0 = blk.k_begin + tile * kTile;
    float mx0 = m0, mx1 = m1;
    scale_mask_max<8>(sc, a.scale_log2, tile_key0, quad, tile_key0 + kTile > mask_from, end0, end1, mx0, mx1);
    float alpha0, alpha1;
    exponentiate<8>(sc, mx0, mx1, m0, m1, l0, l1, alpha0, alpha1);

    // 4. PV(tile - 1) done: the shared P tile is free and this warpgroup is done with tile - 1.
    if constexpr (kPvBehind) {
      wgmma_wait<0>();
      fence_regs(o);
      release(tile - 1);
    }
    // Keys 8 n + 2 quad (+1) of rows r0 and r0 + 8: k-step n / 2, its low or high 8 keys.
    uint32_t p[16];
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      p[4 * (n / 2) + 2 * (n % 2)] = pack2<true>(sc[4 * n], sc[4 * n + 1]);
      p[4 * (n / 2) + 2 * (n % 2) + 1] = pack2<true>(sc[4 * n + 2], sc[4 * n + 3]);
    }
    // P[row][key]: 16-byte chunk key / 8 of the row, swizzled; then this tile's maxima and factors.
    const uint32_t p_row0 = smem + Layout::p + r0 * 128 + quad * 4;
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      const uint32_t swz = (n ^ (r0 & 7)) << 4;
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(p_row0 + swz), "r"(p[4 * (n / 2) + 2 * (n % 2)]) : "memory");
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(p_row0 + 8 * 128 + swz), "r"(p[4 * (n / 2) + 2 * (n % 2) + 1])
                   : "memory");
    }
    if (quad == 0) {
      own_max[r0] = m0;
      own_max[r0 + 8] = m1;
      own_alpha[r0] = alpha0;
      own_alpha[r0 + 8] = alpha1;
    }
    fence_proxy_async();  // P's generic-proxy stores, read next by the other warpgroup's wgmma
    mbar_arrive(bars.ready(wg));

    // 5. O = alpha O + P V on this warpgroup's columns, P from registers; waited for at once (a
    //    wgmma with register operands left in flight across the loop's back edge makes ptxas
    //    serialize every wgmma).
    scale_rows(o, alpha0, alpha1);
    const uint64_t vd = v_desc(tile);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
      gmma_rs<PvRegsOp>(p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3], vd + ((kk * 2048) >> 4), o,
                        std::make_index_sequence<128>{});
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(o);
    fence_regs(p);
    release(tile);
  };

  int tile = wg;
  if (wg == 0) {  // tile 0 follows no other tile (num_tiles >= 1)
    own_tile(0, std::false_type{});
    tile = 2;
  }
  for (; tile < blk.num_tiles; tile += 2) own_tile(tile, std::true_type{});
  // The other warpgroup's last tile, after this warpgroup's last.
  if ((blk.num_tiles - 1) % 2 == other) {
    other_pv(blk.num_tiles - 1);
    wgmma_wait<0>();
    fence_regs(o);
    release(blk.num_tiles - 1);
  }

  finish_segment(a, blk, o, m0, m1, l0, l1, row_sum, wg, t);
}

template <bool kBalanced, Schedule kSchedule>
__device__ __forceinline__ void run_consumer(const Args& a, const Segments<kBalanced>& segs, uint32_t smem,
                                             float* shared, const Barriers& bars, int wg, int t) {
  int round = 0;
  uint32_t it = 0;
  uint32_t consumed = 0;  // seesaw: tiles of the other warpgroup's taken so far (its ready barrier's phase)
  uint32_t widened = 0;   // seesaw, fp8: uses of this warpgroup's widened barrier so far
  for (int i = 0; i < segs.size(); ++i) {
    const Block blk = segs.at(a, i);
    if (blk.num_tiles > 0) {
      if constexpr (kSchedule == Schedule::lockstep) {
        consume_lockstep<kBalanced>(a, blk, smem, shared, bars, wg, t, round++, it);
      } else {
        consume_seesaw<kBalanced, kSchedule == Schedule::seesaw_fp8>(a, blk, smem, shared, bars, wg, t, round++, it,
                                                                     consumed, widened);
      }
    } else if (blk.slot >= 0 && wg == 0 && t < kRows && blk.j0 + t < a.rows) {
      // A partial with no key the block's rows see: the merge gives it no weight.
      a.part_lse[(static_cast<int64_t>(blk.b) * a.num_splits + blk.slot) * a.rows + blk.j0 + t] = -INFINITY;
    }
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <bool kBalanced, Schedule kSchedule>
__global__ void __launch_bounds__(kThreads, 1) mla_fa3_kernel(const __grid_constant__ Args a) {
  pdl_launch_dependents();  // the split merge (if any) waits on SMs as this grid's CTAs leave them
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t smem = smem_addr(smem_raw);
  if ((smem & 1023) != 0) __trap();  // the swizzle atoms and descriptors assume it
  const int tid = static_cast<int>(threadIdx.x);
  const Segments<kBalanced> segs(a);
  if constexpr (!kBalanced) {
    if (is_empty_split(a, segs.at(a, 0), tid)) return;
  }
  const Barriers bars{smem + Layout::bars};
  if (tid == 0) {
    mbar_init(bars.q_full(), kProducerThreads);  // every producer thread, as its copies land
    mbar_init(bars.q_empty(), 2);   // one thread per consumer warpgroup
    for (int w = 0; w < 2; ++w) {
      mbar_init(bars.ready(w), 128);
      mbar_init(bars.widened(w), 128);
    }
    for (int s = 0; s < kStages; ++s) {
      for (int chunk = 0; chunk < kChunks; ++chunk) mbar_init(bars.kv_full(s, chunk), kProducerThreads);
    for (int box = 0; box < kRawBoxes; ++box) mbar_init(bars.raw_full(s, box), kProducerThreads);
      mbar_init(bars.kv_empty(s), 256);  // every consumer thread (lockstep)
      for (int w = 0; w < 2; ++w) mbar_init(bars.half_empty(s, w), 128);
      mbar_init(bars.kpe_empty(s), 4);  // lane 0 of each of the owner's warps
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (tid < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
    run_producer<kBalanced, kSchedule>(a, segs, smem, bars, tid);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
    // The warpgroup index through a shuffle, which ptxas knows to be warp-uniform: the seesaw's
    // branches on it hold wgmmas, and a possibly divergent one serializes every wgmma.
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0) - 1;
    run_consumer<kBalanced, kSchedule>(a, segs, smem, reinterpret_cast<float*>(smem_raw + Layout::tile_stats), bars,
                                       wg, tid % 128);
  }
#else
  (void)a;
  __trap();  // fa3 needs sm_90a (wgmma, setmaxnreg); mla_fa3_available refuses other devices
#endif
}


// One of fa3's kernels (this one, the transposed ones) on `grid`: kThreads a CTA, smem_bytes of
// shared memory (its limit raised once).
template <auto kKernel>
cudaError_t launch_fa3_kernel(const Args& a, dim3 grid, int smem_bytes, cudaStream_t stream) {
  const cudaError_t status = ensure_smem_limit<kKernel>(smem_bytes);
  if (status != cudaSuccess) return status;
  return launch_kernel(kKernel, grid, dim3(kThreads), smem_bytes, stream, false, a);
}

// The launch of one variant on its grid (its translation unit instantiates it), and the probe of
// its kernel image (cudaFuncGetAttributes).
template <bool kBalanced, Schedule kSchedule>
cudaError_t launch_mla_fa3_grid(const Args& a, dim3 grid, cudaStream_t stream) {
  return launch_fa3_kernel<mla_fa3_kernel<kBalanced, kSchedule>>(a, grid, Layout::bytes, stream);
}

template <bool kBalanced, Schedule kSchedule>
cudaError_t mla_fa3_kernel_attributes(cudaFuncAttributes* attributes) {
  return cudaFuncGetAttributes(attributes, mla_fa3_kernel<kBalanced, kSchedule>);
}

// The transposed variant (mla_fa3_transposed_kernel.cuh): fp8 KV, blocks of at most kTransposedMaxRows
// query rows, on the uniform grid or a balanced schedule.
constexpr int kTransposedMaxRows = 16;
template <bool kBalanced>
cudaError_t launch_mla_fa3_transposed(const Args& a, dim3 grid, cudaStream_t stream);
template <bool kBalanced>
cudaError_t mla_fa3_transposed_attributes(cudaFuncAttributes* attributes);

#define KBENCH_MLA_FA3_VARIANT(kind, balanced, schedule)                                                \
  kind template cudaError_t launch_mla_fa3_grid<balanced, Schedule::schedule>(const Args&, dim3, cudaStream_t); \
  kind template cudaError_t mla_fa3_kernel_attributes<balanced, Schedule::schedule>(cudaFuncAttributes*);
KBENCH_MLA_FA3_VARIANT(extern, false, lockstep)
KBENCH_MLA_FA3_VARIANT(extern, true, lockstep)
KBENCH_MLA_FA3_VARIANT(extern, false, seesaw)
KBENCH_MLA_FA3_VARIANT(extern, true, seesaw)
KBENCH_MLA_FA3_VARIANT(extern, false, seesaw_fp8)
KBENCH_MLA_FA3_VARIANT(extern, true, seesaw_fp8)

}  // namespace mla_fa3_detail
}  // namespace kbench::kernels
