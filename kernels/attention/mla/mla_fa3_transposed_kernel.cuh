// fa3's transposed variant for fp8 e4m3 KV and blocks of at most 16 query rows (the memory-bound
// decode: 16 heads x 1 token), on the uniform grid or a balanced schedule (mla_split.hpp: a CTA's
// segments in turn, each one's Q^T staged by the producers while the consumers merge the previous
// one's, the raw slots running on across segments: `produce`). The lockstep kernel pads 16 rows to
// wgmma's 64-row M (4x the tensor work) and widens each tile to bf16 in its stage, holding the
// stage (and the next load) until the tile's GEMMs are done. Here the keys are wgmma's M and the
// query rows its N:
//   S^T [64 keys][16 rows] = K Q^T: K's fragments in registers, straight from the tile's e4m3 bytes
//     (cvt to f16, exact), Q^T in shared memory (f16);
//   O^T [512][16] += V^T P^T: V^T's fragments in registers too, read from the tile's e4m3 ckv by
//     ldmatrix.trans (each 16-bit element two dims of a key, so a thread receives two dims of two
//     keys: one byte permute regroups them by dim before the cvt), P^T f16 in shared memory.
// The tensor work is a quarter of the padded kernel's, and no widened copy of the tile passes
// through shared memory (session 39: an f16 V buffer took 128 KB of shared traffic a tile, written
// and read by wgmma, and 128 KB of space). f16 takes e4m3 exactly in one cvt per two values, and
// bf16 q exactly times a power of two. The consumers' instruction latency bounds it
// (experiments/session33/): each tile's chunks load the next chunk's bytes before converting
// theirs, and the keys are permuted within each 8-row group so that the raw rows a warp loads at
// once fall on distinct banks.
//
// 384 threads: warpgroup 0 loads tiles (load_raw_tile: TMA boxes or gathers) into four raw slots;
// consumer warpgroup w (1, 2 -> w = 0, 1) takes the CTA's tiles of parity w (slots w and w + 2) with
// its own online softmax and P^T, and frees a slot once its PV is done; at a segment's end the two
// warpgroups' (max, sum, O) are merged through shared memory. The K dimension (576) is permuted within each 64-wide chunk so that a
// thread's A fragments of four k-steps are 16 consecutive bytes of its key's row: quad q's k-step j
// takes dims 16 q + 4 j + {0, 1} (A columns 2 q, 2 q + 1) and 16 q + 4 j + {2, 3} (columns 2 q + 8,
// 2 q + 9); Q^T is stored in that order. q is staged as f16 times 2^e (e from the block's largest
// |q|, so that bf16 q converts without overflow; fp8 q: e = 0); kpe's GEMM has its own accumulator
// (times kpe_mul). (Both warpgroups on every tile, each half the dims, with three raw slots,
// measured slower: the partial scores' exchange costs more shared memory traffic than the third
// slot saves.)
//
// Shared memory (1024-byte aligned, 128-byte swizzle): Q^T [9 chunks][16 rows][128 B] (18 KB), four
// raw slots (36 KB each: load_raw_tile's layout), the merge's output rows (fp32, 33 KB), two P^T [16
// rows][64 keys] f16, the warps' column maxima, the warpgroups' (max, sum), the segment's q rows as
// they are (18 KB), mbarriers: 218 KB, one CTA per SM.
//
// One variant a translation unit (mla_fa3_transposed_{uniform,balanced}.cu).
#pragma once

#include "kernels/attention/mla/mla_fa3_kernel.cuh"
#include "kernels/attention/mla/mla_transposed_columns.cuh"
#include "kernels/common/fp8_pack.cuh"

namespace kbench::kernels::mla_fa3_detail {

namespace transposed {

constexpr int kCols = kTransposedMaxRows;        // query rows of a block: the GEMMs' N
constexpr int kQBytes = kChunks * kCols * 128;   // Q^T
constexpr int kRawBytes = kBlockBytes / 2;       // a tile's e4m3 ckv boxes and kpe rows
constexpr int kRawSlots = 4;                     // slots w and w + 2 hold warpgroup w's tiles
constexpr int kPBytes = kCols * 128;             // P^T
constexpr int kMergeStride = kDc + 4;            // fp32 output row of the merge (padded: no bank conflicts)
constexpr int kMergeBytes = (kCols * kMergeStride * 4 + 1023) / 1024 * 1024;
constexpr int kQRowsBytes = kCols * (kDc + kDp) * 2;  // a block's q rows, bf16 at most
constexpr int kWarpgroupBarrier = 1;             // + w: consumer warpgroup w's named barrier (128)
constexpr int kProducerBarrier = 3;              // the producers' named barrier (128)

struct TLayout {
  static constexpr int q = 0;
  static constexpr int raw = q + kQBytes;  // [slot]: tile it of the CTA in slot it % kRawSlots
  static constexpr int merge = raw + kRawSlots * kRawBytes;
  static constexpr int p = merge + kMergeBytes;
  static constexpr int red = p + 2 * kPBytes;             // [warpgroup][warp][16] fp32: column maxima, sums
  static constexpr int stats = red + 2 * 4 * kCols * 4;    // [warpgroup][max, sum][16] fp32
  static constexpr int q_scratch = stats + 2 * 2 * kCols * 4;  // [producer warp] fp32: |q| maxima
  static constexpr int q_exp = q_scratch + 4 * 4;        // the segment's e (Q^T holds q times 2^e)
  static constexpr int q_rows = q_exp + 16;                  // the segment's q rows as they are: q_nope, then q_pe
  // raw_full[slot][box], raw_empty[slot], merge, q_full, q_empty, q_rows_full
  static constexpr int bars = q_rows + kQRowsBytes;
  static constexpr int bytes = bars + 8 * (kRawSlots * (kRawBoxes + 1) + 4);
};
static_assert(TLayout::raw % 1024 == 0 && TLayout::p % 1024 == 0, "swizzle atoms");
static_assert(TLayout::q_rows % 16 == 0, "bulk copies land on 16 bytes");
static_assert(TLayout::bytes <= 227 * 1024, "shared memory per block");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using namespace ::kbench::kernels::hopper;
namespace gmma = cute::SM90::GMMA;
// S^T = K Q^T on 64 keys x 16 rows: K from registers, Q^T K-major in shared memory.
using KqOp = decltype(gmma::rs_op_selector<cute::half_t, cute::half_t, float, cute::Shape<cute::_64, cute::_16, cute::_16>,
                                           gmma::Major::K, gmma::Major::K>());
// O^T += V^T P^T on 64 dims x 16 rows (the same operation): V^T from registers, P^T K-major.

__device__ __forceinline__ uint32_t raw_full(uint32_t smem, int slot, int box) {
  return smem + TLayout::bars + 8 * (slot * kRawBoxes + box);
}
// The slot's tile read by its consumer warpgroup (every thread of it arrives).
__device__ __forceinline__ uint32_t raw_empty(uint32_t smem, int slot) {
  return smem + TLayout::bars + 8 * (kRawSlots * kRawBoxes + slot);
}
// The merge's syncs of both consumer warpgroups (an mbarrier: compute-sanitizer's racecheck loses
// track of a 256-thread named barrier beside the warpgroups' 128-thread ones).
__device__ __forceinline__ uint32_t merge_bar(uint32_t smem) { return smem + TLayout::bars + 8 * kRawSlots * (kRawBoxes + 1); }
// The segment's Q^T staged (the producers arrive) / read by every consumer (all of them arrive).
__device__ __forceinline__ uint32_t q_full(uint32_t smem) { return merge_bar(smem) + 8; }
__device__ __forceinline__ uint32_t q_empty(uint32_t smem) { return merge_bar(smem) + 16; }
// The segment's q rows landed in TLayout::q_rows (thread 0's bulk copies).
__device__ __forceinline__ uint32_t q_rows_full(uint32_t smem) { return merge_bar(smem) + 24; }

// Sixteen e4m3 values -> sixteen f16, exact (f[i]: values 2 i, 2 i + 1).
__device__ __forceinline__ void e4m3x16_to_f16x16(uint4 bits, uint32_t (&f)[8]) {
  const uint32_t w[4] = {bits.x, bits.y, bits.z, bits.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) fp8x4_to_f16<true>(w[i], f[2 * i], f[2 * i + 1]);
}

// Byte offset in Q^T of the f16 pair (row n, dims d + 2 k, + 1), d a multiple of 8, k < 4: column p =
// 16 step + 2 quad + 8 high of chunk d / 64 (see the header), so 16-byte unit 2 step + high = 4 (bit
// 3 of d) + k at byte 4 quad, 128-byte swizzled.
__device__ __forceinline__ uint32_t q_pair_offset(uint32_t n, uint32_t d, uint32_t k) {
  const uint32_t unit = 4 * ((d / 8) % 2) + k, quad = (d % 64) / 16;
  return (d / 64) * (kCols * 128) + n * 128 + ((unit ^ (n % 8)) << 4) + 4 * quad;
}

// A block's q rows (Q^T's source) into TLayout::q_rows by thread 0's two bulk copies, once the
// producers are done with the previous segment's (stage_q ends on their barrier): they land while
// the segment's first tiles load, so that staging Q^T reads shared memory only (it read q from global
// memory piece by piece, about twenty dependent round trips a segment: session 42).
__device__ __forceinline__ void copy_q_rows(const Args& a, const Block& blk, uint32_t smem) {
  const int64_t row0 = static_cast<int64_t>(blk.b) * a.rows + blk.j0;
  const uint32_t rows = static_cast<uint32_t>(min(kCols, a.rows - blk.j0));
  const uint32_t elem = a.q_fp8 != 0 ? 1 : 2;
  const uint32_t bar = q_rows_full(smem);
  mbar_arrive_expect_tx(bar, rows * (kDc + kDp) * elem);
  bulk_load(smem + TLayout::q_rows, static_cast<const uint8_t*>(a.q_nope) + row0 * kDc * elem, rows * kDc * elem, bar);
  bulk_load(smem + TLayout::q_rows + kCols * kDc * elem, static_cast<const uint8_t*>(a.q_pe) + row0 * kDp * elem,
            rows * kDp * elem, bar);
}

// Q^T of a segment's block (rows past the request's zero) by the producers from its q rows in shared
// memory, once the consumers are done with the previous segment's: q times 2^e, e to q_exp, then
// q_full. bf16 q: e puts the block's largest |q| in [2^14, 2^15) (a first pass finds it); fp8 q: e = 0.
__device__ __forceinline__ void stage_q(const Args& a, const Block& blk, uint32_t smem, uint8_t* smem_ptr, int tid,
                                        int round) {
  constexpr int kPieces = kCols * (kDc + kDp) / 8 / kProducerThreads;  // a thread's, of 8 values
  static_assert(kPieces * kProducerThreads * 8 == kCols * (kDc + kDp), "whole pieces");
  const uint32_t rows = static_cast<uint32_t>(min(kCols, a.rows - blk.j0));
  // Piece j of the thread: row n = i / 72, dims [d, d + 8), d = 8 (i % 72), i = tid + 128 j; q_nope
  // below 512, q_pe above. Unsigned index math, no branch on a piece, unrolled by three: three pieces'
  // loads in flight (by nine, within the producers' 56 registers, gathered pages of 16 ran 7% slower).
  const auto piece = [&](int j, uint32_t& n, uint32_t& d) {
    const uint32_t i = static_cast<uint32_t>(tid + j * kProducerThreads);
    n = i / 72;
    d = 8 * (i - 72 * n);
  };
  const auto source = [&](uint32_t n, uint32_t d, uint32_t elem_bytes) {
    const uint32_t offset = d < kDc ? n * kDc + d : kCols * kDc + n * kDp + (d - kDc);
    return smem + TLayout::q_rows + offset * elem_bytes;
  };
  if (round > 0) mbar_wait(q_empty(smem), (round - 1) & 1);
  mbar_wait(q_rows_full(smem), round & 1);
  int e = 0;  // Q^T holds q times 2^e
  // A piece's f16 pairs (dims d, d + 2, d + 4, d + 6) into Q^T; zeros for rows past the request's (their
  // q rows hold whatever was there: loaded anyway, so that no load waits on a branch).
  const auto store_piece = [&](uint32_t n, uint32_t d, const uint32_t (&f)[4]) {
#pragma unroll
    for (uint32_t k = 0; k < 4; ++k) {
      const uint32_t value = n < rows ? f[k] : 0u;
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(smem + TLayout::q + q_pair_offset(n, d, k)), "r"(value) : "memory");
    }
  };
  if (a.q_fp8 != 0) {  // e = 0
#pragma unroll 3
    for (int j = 0; j < kPieces; ++j) {
      uint32_t n, d, f[4];
      piece(j, n, d);
      const uint2 bits = ld_shared_v2(source(n, d, 1));
      fp8x4_to_f16<true>(bits.x, f[0], f[1]);
      fp8x4_to_f16<true>(bits.y, f[2], f[3]);
      store_piece(n, d, f);
    }
  } else {
    float largest = 0.0f;
#pragma unroll 3
    for (int j = 0; j < kPieces; ++j) {
      uint32_t n, d;
      piece(j, n, d);
      const uint4 v = ld_shared_v4(source(n, d, 2));
      const auto* h = reinterpret_cast<const __nv_bfloat162*>(&v);
      float piece_largest = 0.0f;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 x = __bfloat1622float2(h[k]);
        piece_largest = fmaxf(piece_largest, fmaxf(fabsf(x.x), fabsf(x.y)));
      }
      largest = n < rows ? fmaxf(largest, piece_largest) : largest;
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, off));
    float* scratch = reinterpret_cast<float*>(smem_ptr + TLayout::q_scratch);
    if (tid % 32 == 0) scratch[tid / 32] = largest;
    named_sync(kProducerBarrier, kProducerThreads);
    largest = fmaxf(fmaxf(scratch[0], scratch[1]), fmaxf(scratch[2], scratch[3]));
    if (largest > 0.0f) {
      int x;
      frexpf(largest, &x);  // largest in [2^(x - 1), 2^x)
      e = min(15 - x, 64);  // (values below 2^-88 flush: their scores are 0 to 1e-26)
    }
    const float scale = ldexpf(1.0f, e);
#pragma unroll 3
    for (int j = 0; j < kPieces; ++j) {
      uint32_t n, d, f[4];
      piece(j, n, d);
      const uint4 v = ld_shared_v4(source(n, d, 2));
      const auto* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 x = __bfloat1622float2(h[k]);
        f[k] = pack2<false>(x.x * scale, x.y * scale);
      }
      store_piece(n, d, f);
    }
  }
  if (tid == 0) *reinterpret_cast<int*>(smem_ptr + TLayout::q_exp) = e;
  fence_proxy_async();  // Q^T's generic stores, read by wgmma
  mbar_arrive(q_full(smem));
  // Every producer is done reading the q rows: the next segment's may land there.
  named_sync_reconverged(kProducerBarrier, kProducerThreads);
}

// The producers: each segment's tiles, tile it of the CTA (over its segments) into slot it % kRawSlots, and
// its Q^T from its q rows, copied in as the segment opens, after the segment's first two tiles: a
// later segment's (balanced schedules) load while the consumers finish the segment before, so that
// its start waits neither on its loads nor on q; a CTA's first segment's where TMA loads them (0.7%
// on the memory-bound case, session 42). Gathered first tiles would delay the first staging (7%
// when it read q from global memory, session 34): Q^T first there.
template <bool kBalanced>
__device__ __forceinline__ void produce(const Args& a, const Segments<kBalanced>& segs, uint32_t smem,
                                        uint8_t* smem_ptr, int tid) {
  const int warp = tid / 32;
  const int lane = tid % 32;
  uint32_t it = 0;
  int round = 0;
  for (int i = 0; i < segs.size(); ++i) {
    const Block blk = segs.at(a, i);
    if (blk.num_tiles == 0) continue;
    // Tiles loaded before Q^T: a later segment's first two (balanced schedules); a CTA's first
    // segment's too where TMA loads them (a few instructions of thread 0's), not where gathers would
    // delay the staging.
    const int q_after = (kBalanced && round > 0) || a.page_tma != 0 ? min(2, blk.num_tiles) : 0;
    if (tid == 0) copy_q_rows(a, blk, smem);
    const int32_t* pages = a.kv_indices + a.kv_indptr[blk.b];
    int64_t next_row = tile_cache_row(a, blk, pages, 0, warp, lane);
    // One call site of stage_q (two inlined copies made the kernel slower).
    for (int tile = 0;; ++tile, ++it) {
      if (tile == q_after) stage_q(a, blk, smem, smem_ptr, tid, round++);
      if (tile == blk.num_tiles) break;
      const int slot = it % kRawSlots;
      const int64_t my_row = next_row;
      if (tile + 1 < blk.num_tiles) next_row = tile_cache_row(a, blk, pages, tile + 1, warp, lane);
      mbar_wait(raw_empty(smem, slot), ((it / kRawSlots) & 1) ^ 1);
      load_raw_tile(a, blk, smem + TLayout::raw + slot * kRawBytes, raw_full(smem, slot, 0), my_row, tile, tid);
    }
  }
  cp_async_wait_all();
}

// Consumer warpgroup w's tiles of a segment (the CTA's tiles it0 + tile of parity w), then the
// merge with the other warpgroup and the block's output. Thread t holds a tile's keys r and r + 8
// and query rows (columns) 8 g + 2 quad + c at index 2 g + c (g, c in {0, 1}). r = 16 (t / 32) +
// sigma((t % 32) / 4), sigma = 0 5 1 4 2 7 3 6: wgmma's row order is free (S^T's M, PV's K), and
// with it the eight lanes of a shared-memory phase take two rows 5 apart (mod 8), whose swizzled
// 16-byte chunks (u ^ row, u in 0..3 or 4..7) differ: no bank conflicts. O^T's rows are dims in
// pairs: row 16 warp + g is dim 16 warp + 2 g of a 64-dim block, row + 8 the next (the dims of
// V^T's fragments as ldmatrix.trans hands them out).
__device__ __forceinline__ void consume_segment(const Args& a, const Block& blk, uint32_t smem, uint8_t* smem_ptr,
                                                int e_q, int wg, int t, uint32_t it0, uint32_t& merge_phase) {
  const int warp = t / 32;
  const int lane = t % 32;
  const int quad = lane % 4;
  const int r = 16 * warp + ((lane / 8) ^ (5 * ((lane / 4) & 1)));
  const int dim_pair = 16 * warp + 2 * (lane / 4);  // the dims of the thread's O^T rows (of a 64-dim block)
  float* red = reinterpret_cast<float*>(smem_ptr + TLayout::red) + wg * 4 * kCols;  // this warpgroup's [warp][16]
  const TransposedColumns columns{warp, lane, r, red, kWarpgroupBarrier + wg};
  int end[4], mask_from;
  columns.key_ends(a, blk, end, mask_from);
  const float scale = a.scale_log2 * ldexpf(1.0f, -e_q);
  const uint32_t pbuf = smem + TLayout::p + wg * kPBytes;
  const uint64_t p_desc = smem_desc(pbuf, 16, 1024);
  const uint64_t q_desc = smem_desc(smem + TLayout::q, 16, 1024);

  float o[8][8];  // O^T: dims 64 mb + dim_pair (+ 1 at index 2, 3 of a group) x the thread's columns
#pragma unroll
  for (int mb = 0; mb < 8; ++mb) {
#pragma unroll
    for (int i = 0; i < 8; ++i) o[mb][i] = 0.0f;
  }
  float m[4], l[4];  // running maxima (log2 units) and this thread's share of the sums, per column
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
  }
  // The CTA's tile it0 + tile is warpgroup (it0 + tile) % 2's, in slot (it0 + tile) % kRawSlots.
  for (int tile = (wg ^ static_cast<int>(it0)) & 1; tile < blk.num_tiles; tile += 2) {
    const int slot = (it0 + tile) % kRawSlots;
    const uint32_t parity = ((it0 + tile) / kRawSlots) & 1;
    const uint32_t raw = smem + TLayout::raw + slot * kRawBytes;
    float s_nope[8], s_pe[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      s_nope[i] = 0.0f;
      s_pe[i] = 0.0f;
    }
    fence_regs(s_nope);  // zeroed here, not sunk between the GEMM's stages (ptxas would serialize them)
    fence_regs(s_pe);
    // Chunk c (64 dims; 8 is kpe): the thread's 16 bytes of rows r and r + 8 -> f16 A fragments of
    // 4 k-steps; S^T += K_c Q^T_c, one commit group a chunk, at most two in flight (their fragments'
    // registers). Chunk c + 1's bytes are loaded before chunk c is taken (the loads' latency
    // otherwise stalls every chunk).
    const auto load_chunk = [&](int c, uint4& row0, uint4& row1) {
      if (c % 2 == 0) mbar_wait(raw_full(smem, slot, c / 2), parity);
      if (c < kChunks - 1) {
        const int u = 4 * (c % 2) + quad;  // 16-byte piece of the key's 128-byte box row
        const uint32_t box = raw + (c / 2) * kRawBoxBytes;
        row0 = ld_shared_v4(box + r * 128 + ((u ^ (r & 7)) << 4));
        row1 = ld_shared_v4(box + (r + 8) * 128 + ((u ^ (r & 7)) << 4));
      } else {
        const uint32_t kpe = raw + (kRawKpe - kRawCkv);
        row0 = ld_shared_v4(kpe + r * kDp + 16 * quad);
        row1 = ld_shared_v4(kpe + (r + 8) * kDp + 16 * quad);
      }
    };
    uint4 next0, next1;
    load_chunk(0, next0, next1);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const uint4 row0 = next0, row1 = next1;
      if (c + 1 < kChunks) load_chunk(c + 1, next0, next1);
      uint32_t x[8], y[8];  // rows r, r + 8
      e4m3x16_to_f16x16(row0, x);
      e4m3x16_to_f16x16(row1, y);
      wgmma_fence();
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint64_t b = q_desc + ((c * kCols * 128 + j * 32) >> 4);
        if (c < kChunks - 1) {
          gmma_rs<KqOp>(x[2 * j], y[2 * j], x[2 * j + 1], y[2 * j + 1], b, s_nope, std::make_index_sequence<8>{});
        } else {
          gmma_rs<KqOp>(x[2 * j], y[2 * j], x[2 * j + 1], y[2 * j + 1], b, s_pe, std::make_index_sequence<8>{});
        }
      }
      wgmma_commit();
      if (c > 0) wgmma_wait<1>();
    }
    wgmma_wait<0>();
    fence_regs(s_nope);
    fence_regs(s_pe);

    // Scores (log2 units), masked where the tile reaches past column 0's bound; the online softmax
    // step over the columns, P^T f16 (TransposedColumns).
    const int key0 = blk.k_begin + tile * kTile;
    float s[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) s[i] = (s_nope[i] + a.kpe_mul * s_pe[i]) * scale;
    columns.mask(s, key0, key0 + kTile > mask_from, end);
    float alpha[4];
    columns.step<__half>(s, m, l, alpha, pbuf);

    // O^T = alpha O^T + V^T P^T: 8 blocks of 64 dims x 4 k-steps of 16 keys. V^T's fragments of
    // block mb: ldmatrix.trans over the raw ckv box's 16-byte pieces of dims 64 mb + 16 warp.. (a
    // matrix: 8 keys; lane l addresses key 8 (l / 8) + l % 8 of the two k-steps), each register
    // [k d, k d+1, k' d, k' d+1] permuted to [k d, k' d, k d+1, k' d+1] and widened: the pairs of
    // O^T's rows g and g + 8. A block's fragments are made while the block before's GEMMs run.
#pragma unroll
    for (int mb = 0; mb < 8; ++mb) {
#pragma unroll
      for (int i = 0; i < 8; ++i) o[mb][i] *= alpha[2 * (i / 4) + i % 2];
    }
    const uint32_t v_rows = raw + (8 * (lane / 8) + lane % 8) * 128;
    uint32_t frag[2][16];  // [mb % 2][4 k-steps x the 4 A registers]
#pragma unroll
    for (int mb = 0; mb < 8; ++mb) {
      uint32_t(&f)[16] = frag[mb % 2];
      uint32_t bits[2][4];  // [half]: k-steps 2 half, 2 half + 1 (keys 32 half..)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const uint32_t piece = ((4 * (mb % 2) + warp) ^ (lane & 7)) << 4;  // dims 64 mb + 16 warp.. of the box
        sm80::ldsm_x4_trans(v_rows + (mb / 2) * kRawBoxBytes + half * 32 * 128 + piece, bits[half]);
      }
      if (mb >= 2) wgmma_wait<1>();  // block mb - 2's GEMMs, which read f, are done
#pragma unroll
      for (int half = 0; half < 2; ++half) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          fp8x4_to_f16<true>(__byte_perm(bits[half][j], 0u, 0x3120), f[8 * half + 2 * j], f[8 * half + 2 * j + 1]);
        }
      }
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) {
        gmma_rs<KqOp>(f[4 * kk], f[4 * kk + 1], f[4 * kk + 2], f[4 * kk + 3], p_desc + ((kk * 32) >> 4), o[mb],
                      std::make_index_sequence<8>{});
      }
      wgmma_commit();
    }
    // Waited for here, freeing the raw slot and P^T (a GEMM left in flight across the loop's back
    // edge makes ptxas serialize every wgmma); the other warpgroup keeps the SM busy meanwhile.
    wgmma_wait<0>();
#pragma unroll
    for (int mb = 0; mb < 8; ++mb) fence_regs(o[mb]);
    mbar_arrive(raw_empty(smem, slot));  // every raw byte read: the slot refills
  }

  // Q^T is read (every wgmma of the warpgroup's tiles waited for): the next segment's may be staged
  // under the merge.
  mbar_arrive(q_empty(smem));
  // The warpgroup's column sums (lanes xor 4, 8, 16, then its warps; every thread is past the last
  // tile's reads of red), then both warpgroups' (max, sum) to stats.
  float* stats = reinterpret_cast<float*>(smem_ptr + TLayout::stats);  // [warpgroup][max, sum][16]
  columns.publish_sums(l, red);
  if (t < 4) {  // lane q holds columns columns.col(0..3)
#pragma unroll
    for (int ci = 0; ci < 4; ++ci) {
      const int col = columns.col(ci);
      stats[2 * wg * kCols + col] = m[ci];
      stats[(2 * wg + 1) * kCols + col] = TransposedColumns::total(red, col);
    }
  }
  const auto consumers_sync = [&] {
    mbar_arrive(merge_bar(smem));
    mbar_wait(merge_bar(smem), merge_phase);
    merge_phase ^= 1;
  };
  consumers_sync();  // also: both warpgroups' GEMMs are done
  // Column col's merged max and sum, and warpgroup w's weight 2^(m_w - max) (0 without keys).
  const auto weight = [&](int w, int col, float big) {
    const float mw = stats[2 * w * kCols + col];
    return mw == -INFINITY ? 0.0f : sm80::ex2(mw - big);
  };
  const auto merged = [&](int col, float& big, float& sum) {
    big = fmaxf(stats[col], stats[2 * kCols + col]);
    sum = stats[kCols + col] * weight(0, col, big) + stats[3 * kCols + col] * weight(1, col, big);
  };
  // O = sum_w weight_w O_w / sum (times ckv_scale) into the output rows [16][kMergeStride] fp32
  // (warpgroup 0's written, then 1's added).
  float* merge = reinterpret_cast<float*>(smem_ptr + TLayout::merge);
  float factor[4];
#pragma unroll
  for (int ci = 0; ci < 4; ++ci) {
    float big, sum;
    merged(columns.col(ci), big, sum);
    factor[ci] = sum > 0.0f ? weight(wg, columns.col(ci), big) / sum * a.v_scale : 0.0f;
  }
#pragma unroll
  for (int pass = 0; pass < 2; ++pass) {
    if (wg == pass) {
#pragma unroll
      for (int mb = 0; mb < 8; ++mb) {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const int ci = 2 * (i / 4) + i % 2;
          float& x = merge[columns.col(ci) * kMergeStride + 64 * mb + dim_pair + (i / 2) % 2];
          x = (pass == 0 ? 0.0f : x) + o[mb][i] * factor[ci];
        }
      }
    }
    consumers_sync();
  }
  // The block's rows: bf16 output, or the normalised partial and its log2-sum-exp.
  const int rows = min(kCols, a.rows - blk.j0);
  const int ct = wg * 128 + t;
  if (blk.slot < 0) {
    const int64_t out_row0 = static_cast<int64_t>(blk.b) * a.rows + blk.j0;
    for (int i = ct; i < rows * (kDc / 8); i += 256) {
      const int j = i / (kDc / 8), d = 8 * (i % (kDc / 8));
      const float4 x0 = *reinterpret_cast<const float4*>(merge + j * kMergeStride + d);
      const float4 x1 = *reinterpret_cast<const float4*>(merge + j * kMergeStride + d + 4);
      *reinterpret_cast<uint4*>(a.out + (out_row0 + j) * kDc + d) =
          make_uint4(pack2<true>(x0.x, x0.y), pack2<true>(x0.z, x0.w), pack2<true>(x1.x, x1.y), pack2<true>(x1.z, x1.w));
    }
  } else {
    const int64_t part_row0 = (static_cast<int64_t>(blk.b) * a.num_splits + blk.slot) * a.rows + blk.j0;
    for (int i = ct; i < rows * (kDc / 4); i += 256) {
      const int j = i / (kDc / 4), d = 4 * (i % (kDc / 4));
      *reinterpret_cast<float4*>(a.part_o + (part_row0 + j) * kDc + d) =
          *reinterpret_cast<const float4*>(merge + j * kMergeStride + d);
    }
    if (ct < rows) {
      float big, sum;
      merged(ct, big, sum);
      a.part_lse[part_row0 + ct] = sum > 0.0f ? big + __log2f(sum) : -INFINITY;
    }
  }
  // The output rows and stats read: the next segment may overwrite them.
  consumers_sync();
}

// A consumer warpgroup's segments (one on the uniform grid), `it` counting the CTA's tiles.
template <bool kBalanced>
__device__ __forceinline__ void consume(const Args& a, const Segments<kBalanced>& segs, uint32_t smem,
                                        uint8_t* smem_ptr, int wg, int t) {
  uint32_t it = 0, merge_phase = 0;
  int round = 0;
  for (int i = 0; i < segs.size(); ++i) {
    const Block blk = segs.at(a, i);
    if (blk.num_tiles == 0) {  // a partial with no key the block's rows see: no weight in the merge
      if (blk.slot >= 0 && wg == 0 && t < kCols && blk.j0 + t < a.rows) {
        a.part_lse[(static_cast<int64_t>(blk.b) * a.num_splits + blk.slot) * a.rows + blk.j0 + t] = -INFINITY;
      }
      continue;
    }
    mbar_wait(q_full(smem), round++ & 1);
    const int e_q = *reinterpret_cast<const int*>(smem_ptr + TLayout::q_exp);
    consume_segment(a, blk, smem, smem_ptr, e_q, wg, t, it, merge_phase);
    it += blk.num_tiles;
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <bool kBalanced>
__global__ void __launch_bounds__(kThreads, 1) mla_fa3_transposed_kernel(const __grid_constant__ Args a) {
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
  if (tid == 0) {
    for (int slot = 0; slot < kRawSlots; ++slot) {
      for (int box = 0; box < kRawBoxes; ++box) mbar_init(raw_full(smem, slot, box), kProducerThreads);
      mbar_init(raw_empty(smem, slot), 128);  // every thread of its consumer warpgroup
    }
    mbar_init(merge_bar(smem), 256);
    mbar_init(q_full(smem), kProducerThreads);
    mbar_init(q_empty(smem), 256);
    mbar_init(q_rows_full(smem), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (tid < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
    produce<kBalanced>(a, segs, smem, smem_raw, tid);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
    // The warpgroup index through a shuffle, which ptxas knows to be warp-uniform.
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0) - 1;
    consume<kBalanced>(a, segs, smem, smem_raw, wg, tid % 128);
  }
#else
  (void)a;
  __trap();  // sm_90a only; mla_fa3_available refuses other devices
#endif
}

}  // namespace transposed

template <bool kBalanced>
cudaError_t launch_mla_fa3_transposed(const Args& a, dim3 grid, cudaStream_t stream) {
  return launch_fa3_kernel<transposed::mla_fa3_transposed_kernel<kBalanced>>(a, grid, transposed::TLayout::bytes,
                                                                             stream);
}

template <bool kBalanced>
cudaError_t mla_fa3_transposed_attributes(cudaFuncAttributes* attributes) {
  return cudaFuncGetAttributes(attributes, transposed::mla_fa3_transposed_kernel<kBalanced>);
}

#define KBENCH_MLA_FA3_TRANSPOSED_VARIANT(kind, balanced)                                   \
  kind template cudaError_t launch_mla_fa3_transposed<balanced>(const Args&, dim3, cudaStream_t); \
  kind template cudaError_t mla_fa3_transposed_attributes<balanced>(cudaFuncAttributes*);
KBENCH_MLA_FA3_TRANSPOSED_VARIANT(extern, false)
KBENCH_MLA_FA3_TRANSPOSED_VARIANT(extern, true)

}  // namespace kbench::kernels::mla_fa3_detail
