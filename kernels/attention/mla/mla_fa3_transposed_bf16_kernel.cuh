// fa3's transposed variant for bfloat16 KV and blocks of at most 16 query rows (the memory-bound
// decode: 16 heads x 1 token), on the uniform grid or a balanced schedule (mla_split.hpp). Keys are
// wgmma's M and the query rows its N, as in the fp8 transposed kernel, so no tensor work or
// shared-memory traffic goes to padding rows. The lockstep kernel it replaces for these blocks pads
// 16 rows to M = 64 and reads ~300 KB of shared memory a tile, which bound it by the SM clock, not
// the HBM: on an H200 its memory-bound time followed the power-managed clock, 282 us at 1.79 GHz and
// 325 us at 1.53 (experiments/session40/), where this kernel holds ~300 us.
//
// Each consumer warpgroup owns half of every tile's columns: warpgroup 0 the ckv chunks 0..3 and
// kpe (chunk 8), warpgroup 1 the ckv chunks 4..7. Per tile:
//   S^T partial [64 keys][16 rows] = K_own Q^T_own (SS: the tile's chunks as K-major A, Q^T's as
//     K-major B); the two partials exchanged through shared memory (mbarriers part_full /
//     part_empty), each warpgroup adding the other's to its own (a + b = b + a: both hold the same
//     scores, so the same column maxima, P^T and sums, and no further exchange);
//   O^T [the warpgroup's 256 dims][16] += V^T P^T (SS: the own ckv chunks as MN-major A, the
//     warpgroup's own copy of P^T [16 rows][64 keys] bf16 as K-major B).
// So each byte of a tile is read by one warpgroup, and a chunk's slot frees as soon as its owner is
// done with it (kpe after the S GEMM).
//
// The tiles' chunks (8 KB: [64 keys][128 B], 128-byte swizzled) land in a ring of kSlots chunk
// slots, chunk c of the CTA's tile `it` in slot (9 it + c) % kSlots (2.67 tiles; 18 slots ran the
// same, 12 slower). The producer warpgroup loads pages of whole tiles by TMA boxes (one a chunk),
// other tiles by cp.async gathers, as mla_fa3_kernel.cuh's producer does into its stages.
//
// Shared memory (1024-byte aligned): Q^T [9 chunks][16 rows][128 B] (18 KB, zeros past the block's
// rows), the ring (192 KB), two P^T (2 KB each), the score partials [2 warpgroups][8][128 threads]
// fp32 (8 KB), the warps' column maxima and sums, mbarriers: 223 KB, one CTA per SM.
//
// One variant a translation unit (mla_fa3_transposed_bf16_{uniform,balanced}.cu).
#pragma once

#include "kernels/attention/mla/mla_fa3_kernel.cuh"
#include "kernels/attention/mla/mla_transposed_columns.cuh"

namespace kbench::kernels::mla_fa3_detail {

namespace transposed_bf16 {

constexpr int kCols = kTransposedMaxRows;  // query rows of a block: the GEMMs' N
constexpr int kQBytes = kChunks * kCols * 128;
constexpr int kSlots = 24;  // chunk slots of the ring
constexpr int kPBytes = kCols * 128;
constexpr int kPartBytes = 8 * 128 * 4;  // a warpgroup's S^T partial: 8 accumulators x 128 threads
constexpr int kWarpgroupBarrier = 1;     // + w: consumer warpgroup w's named barrier (128)

struct BLayout {
  static constexpr int q = 0;
  static constexpr int ring = q + kQBytes;
  static constexpr int p = ring + kSlots * kChunkBytes;  // [warpgroup]
  static constexpr int part = p + 2 * kPBytes;           // [warpgroup]
  static constexpr int red = part + 2 * kPartBytes;      // [warpgroup][warp][16] fp32 column maxima
  static constexpr int sums = red + 2 * 4 * kCols * 4;   // [warpgroup][warp][16] fp32 column sums
  // full[slot], empty[slot], q_full, q_empty, part_full[2], part_empty[2]
  static constexpr int bars = sums + 2 * 4 * kCols * 4;
  static constexpr int bytes = bars + 8 * (2 * kSlots + 6);
};
static_assert(BLayout::ring % 1024 == 0 && BLayout::p % 1024 == 0, "swizzle atoms");
static_assert(BLayout::bytes <= 227 * 1024, "shared memory per block");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using namespace ::kbench::kernels::hopper;
namespace gmma = cute::SM90::GMMA;
// S^T = K Q^T on 64 keys x 16 rows (both K-major in shared memory).
using KqOp = decltype(gmma::ss_op_selector<cute::bfloat16_t, cute::bfloat16_t, float,
                                           cute::Shape<cute::_64, cute::_16, cute::_16>, gmma::Major::K,
                                           gmma::Major::K>());
// O^T += V^T P^T on 64 dims x 16 rows: V^T MN-major (the tile's 128-byte rows hold 64 dims of a key).
using PvOp = decltype(gmma::ss_op_selector<cute::bfloat16_t, cute::bfloat16_t, float,
                                           cute::Shape<cute::_64, cute::_16, cute::_16>, gmma::Major::MN,
                                           gmma::Major::K>());

struct Ring {
  uint32_t smem;
  // Chunk c of the CTA's tile `it`: its slot's address, its full / empty barrier, the phase parity.
  __device__ int slot(uint32_t it, int c) const { return static_cast<int>((9 * it + c) % kSlots); }
  __device__ uint32_t parity(uint32_t it, int c) const { return ((9 * it + c) / kSlots) & 1; }
  __device__ uint32_t chunk(uint32_t it, int c) const { return smem + BLayout::ring + slot(it, c) * kChunkBytes; }
  __device__ uint32_t full(uint32_t it, int c) const { return smem + BLayout::bars + 8 * slot(it, c); }
  __device__ uint32_t empty(uint32_t it, int c) const { return smem + BLayout::bars + 8 * (kSlots + slot(it, c)); }
  // The segment's Q^T staged (the producers arrive) / read by both consumer warpgroups (a thread each).
  __device__ uint32_t q_full() const { return smem + BLayout::bars + 8 * 2 * kSlots; }
  __device__ uint32_t q_empty() const { return q_full() + 8; }
  // Warpgroup w's score partial written (its threads arrive) / read by the other (its threads arrive).
  __device__ uint32_t part_full(int w) const { return q_full() + 16 + 8 * w; }
  __device__ uint32_t part_empty(int w) const { return q_full() + 32 + 8 * w; }
};

// Byte offset in Q^T of 16-byte piece `piece` (0..71: q_nope's 64, then q_pe's 8) of row n.
__device__ __forceinline__ uint32_t q_piece(int n, int piece) {
  return (piece / 8) * (kCols * 128) + n * 128 + (((piece % 8) ^ (n & 7)) << 4);
}

// The producer warpgroup's work on one segment; `round` counts the CTA's segments with keys, `it`
// its tiles.
__device__ __forceinline__ void produce_segment(const Args& a, const Block& blk, const Ring& ring, int tid, int round,
                                                uint32_t& it) {
  const int warp = tid / 32;
  const int lane = tid % 32;
  const auto* q_nope = static_cast<const __nv_bfloat16*>(a.q_nope);
  const auto* q_pe = static_cast<const __nv_bfloat16*>(a.q_pe);
  const auto* ckv_cache = static_cast<const __nv_bfloat16*>(a.ckv);
  const auto* kpe_cache = static_cast<const __nv_bfloat16*>(a.kpe);
  // Q^T: the block's 16 rows x 72 pieces (rows past the request's zero-filled), once both consumer
  // warpgroups are done with the previous segment's.
  if (round > 0) mbar_wait(ring.q_empty(), (round - 1) & 1);
  const int64_t row0 = static_cast<int64_t>(blk.b) * a.rows + blk.j0;
  for (int i = tid; i < kCols * 72; i += kProducerThreads) {
    const int n = i / 72, piece = i % 72;
    const bool valid = blk.j0 + n < a.rows;
    const __nv_bfloat16* src = !valid       ? q_nope
                               : piece < 64 ? q_nope + (row0 + n) * kDc + piece * 8
                                            : q_pe + (row0 + n) * kDp + (piece - 64) * 8;
    cp_async_16(ring.smem + BLayout::q + q_piece(n, piece), src, valid ? 16u : 0u);
  }
  cp_async_arrive_noinc(ring.q_full());

  const int32_t* pages = a.kv_indices + a.kv_indptr[blk.b];
  int64_t next_row = tile_cache_row(a, blk, pages, 0, warp, lane);
  for (int tile = 0; tile < blk.num_tiles; ++tile, ++it) {
    const int64_t my_row = next_row;
    if (tile + 1 < blk.num_tiles) next_row = tile_cache_row(a, blk, pages, tile + 1, warp, lane);
    // Pages of whole tiles (loads_by_tma): thread 0's row (the tile's first key) starts its page's
    // 64; each chunk one TMA box into its slot as the slot frees. Every producer thread waits for
    // each slot and arrives on its full barrier (arrive_seen_free).
    const bool tma_tile = loads_by_tma(a, blk, tile);
    for (int c = 0; c < kChunks; ++c) {
      mbar_wait(ring.empty(it, c), ring.parity(it, c) ^ 1);
      if (!tma_tile) continue;
      const uint32_t full = ring.full(it, c);
      if (tid == 0) {
        mbar_arrive_expect_tx(full, kChunkBytes);
        tma_load_4d(ring.chunk(it, c), c < kChunks - 1 ? &a.ckv_map : &a.kpe_map, full, 0, static_cast<int>(my_row),
                    c < kChunks - 1 ? c : 0, 0);
        mbar_arrive_count(full, kTmaIssuerArrivals - 1);
      }
      arrive_seen_free(full, tid);
    }
    if (tma_tile) continue;
    // Other tiles: warp w gathers keys [16 w, 16 w + 16) whole (keys past the range zero-filled);
    // each thread's copies arrive on every chunk's full barrier.
    for_each_warp_key(my_row, warp, [&](int key, int64_t row) {
      const bool valid = row >= 0;
      const uint32_t bytes = valid ? 16u : 0u;
      const __nv_bfloat16* ckv = valid ? ckv_cache + row * kDc : ckv_cache;
      const uint32_t swizzle = (static_cast<uint32_t>(lane & 7) ^ (key & 7)) << 4;
      cp_async_16(ring.chunk(it, lane / 8) + key * 128 + swizzle, valid ? ckv + lane * 8 : ckv, bytes);
      cp_async_16(ring.chunk(it, 4 + lane / 8) + key * 128 + swizzle, valid ? ckv + 256 + lane * 8 : ckv, bytes);
      if (lane < 8) {
        const __nv_bfloat16* kpe = valid ? kpe_cache + row * kDp + lane * 8 : kpe_cache;
        cp_async_16(ring.chunk(it, kChunks - 1) + key * 128 + swizzle, kpe, bytes);
      }
    });
    for (int c = 0; c < kChunks; ++c) cp_async_arrive_noinc(ring.full(it, c));
  }
}

// A consumer warpgroup's work on one segment (`round`, `it` as the producer's): see the header.
template <bool kBalanced>
__device__ __forceinline__ void consume_segment(const Args& a, const Block& blk, const Ring& ring, uint8_t* smem_ptr,
                                                int wg, int t, int round, uint32_t& it) {
  const int warp = t / 32;
  const int lane = t % 32;
  const int r0 = warp * 16 + lane / 4;  // the thread's keys (S^T rows) r0, r0 + 8; O^T rows: dims 64 mb + r0, + 8
  float* red = reinterpret_cast<float*>(smem_ptr + BLayout::red) + wg * 4 * kCols;  // [warp][16]
  const TransposedColumns columns{warp, lane, r0, red, kWarpgroupBarrier + wg};
  int end[4], mask_from;
  columns.key_ends(a, blk, end, mask_from);
  float* sums = reinterpret_cast<float*>(smem_ptr + BLayout::sums) + wg * 4 * kCols;
  float* own_part = reinterpret_cast<float*>(smem_ptr + BLayout::part + wg * kPartBytes);
  const float* other_part = reinterpret_cast<const float*>(smem_ptr + BLayout::part + (wg ^ 1) * kPartBytes);
  const uint32_t pbuf = ring.smem + BLayout::p + wg * kPBytes;
  const uint64_t p_desc = smem_desc(pbuf, 16, 1024);
  const uint64_t q_desc = smem_desc(ring.smem + BLayout::q, 16, 1024);

  float o[4][8];  // O^T of dims 256 wg + 64 mb + (r0, r0 + 8) x the thread's 4 columns
#pragma unroll
  for (int mb = 0; mb < 4; ++mb) {
#pragma unroll
    for (int i = 0; i < 8; ++i) o[mb][i] = 0.0f;
  }
  float m[4], l[4];  // per column: running maximum (log2 units), this thread's share of the sum
#pragma unroll
  for (int ci = 0; ci < 4; ++ci) {
    m[ci] = -INFINITY;
    l[ci] = 0.0f;
  }
  mbar_wait(ring.q_full(), round & 1);

  for (int tile = 0; tile < blk.num_tiles; ++tile, ++it) {
    // The warpgroup's S^T partial, chunk by chunk as they land (its 4 ckv chunks, then kpe for
    // warpgroup 0): 4 k-steps of 16 a chunk, the first one overwriting the accumulators.
    float sc[8];
    const auto score_chunk = [&](int c, bool first) {
      mbar_wait(ring.full(it, c), ring.parity(it, c));
      const uint64_t k_desc = smem_desc(ring.chunk(it, c), 16, 1024);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        gmma_ss<KqOp>(k_desc + ((k * 32) >> 4), q_desc + ((c * kCols * 128 + k * 32) >> 4), sc, !first || k > 0,
                      std::make_index_sequence<8>{});
      }
    };
#pragma unroll
    for (int i = 0; i < 4; ++i) score_chunk(4 * wg + i, i == 0);
    if (wg == 0) score_chunk(kChunks - 1, false);
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(sc);
    if (wg == 0) mbar_arrive(ring.empty(it, kChunks - 1));  // kpe is read
    if constexpr (kBalanced) {
      if (tile == blk.num_tiles - 1 && t == 0) mbar_arrive(ring.q_empty());  // the segment's last read of Q^T
    }
    // The partials exchanged: this thread's 8 values beside the other warpgroup's same thread's (the
    // same keys and columns), once the other has read this warpgroup's previous partial.
    if (it > 0) mbar_wait(ring.part_empty(wg), (it - 1) & 1);
#pragma unroll
    for (int i = 0; i < 8; ++i) own_part[i * 128 + t] = sc[i];
    mbar_arrive(ring.part_full(wg));
    mbar_wait(ring.part_full(wg ^ 1), it & 1);
#pragma unroll
    for (int i = 0; i < 8; ++i) sc[i] += other_part[i * 128 + t];
    mbar_arrive(ring.part_empty(wg ^ 1));

    // Scores (log2 units), masked where the tile reaches past column 0's bound; the online softmax
    // step over the columns, P^T bf16 (TransposedColumns).
    const int key0 = blk.k_begin + tile * kTile;
#pragma unroll
    for (int i = 0; i < 8; ++i) sc[i] *= a.scale_log2;
    columns.mask(sc, key0, key0 + kTile > mask_from, end);
    float alpha[4];
    columns.step<__nv_bfloat16>(sc, m, l, alpha, pbuf);

    // O^T = alpha O^T + V^T P^T: the warpgroup's 4 ckv chunks (MN-major A: 64 dims of a key a
    // 128-byte row) x 4 k-steps of 16 keys (2048 bytes).
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) {
#pragma unroll
      for (int i = 0; i < 8; ++i) o[mb][i] *= alpha[2 * (i / 4) + i % 2];
    }
    wgmma_fence();
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) {
      const uint64_t v_desc = smem_desc(ring.chunk(it, 4 * wg + mb), kChunkBytes, 1024);
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) {
        gmma_ss<PvOp>(v_desc + ((kk * 2048) >> 4), p_desc + ((kk * 32) >> 4), o[mb], true,
                      std::make_index_sequence<8>{});
      }
    }
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) fence_regs(o[mb]);
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) mbar_arrive(ring.empty(it, 4 * wg + mb));
  }

  // The column sums over the warpgroup (the next segment's end writes sums again after at least one
  // tile's two barriers).
  columns.publish_sums(l, sums);
#pragma unroll
  for (int ci = 0; ci < 4; ++ci) l[ci] = TransposedColumns::total(sums, columns.col(ci));
  // o = ckv_scale O / l as bf16 (a segment covering its request's keys), or the normalised partial O
  // and the log2-sum-exp (warpgroup 0's lanes 0..3 of warp 0, which hold every column) for the merge.
  const int64_t part_row0 = (static_cast<int64_t>(blk.b) * a.num_splits + blk.slot) * a.rows + blk.j0;
  const int64_t out_row0 = static_cast<int64_t>(blk.b) * a.rows + blk.j0;
#pragma unroll
  for (int ci = 0; ci < 4; ++ci) {
    const int n = columns.col(ci);
    if (blk.j0 + n >= a.rows) continue;
    const float inv = l[ci] > 0.0f ? a.v_scale / l[ci] : 0.0f;
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int dim = 256 * wg + 64 * mb + r0 + 8 * h;
        const float v = o[mb][4 * (ci / 2) + 2 * h + ci % 2] * inv;
        if (blk.slot < 0) {
          a.out[(out_row0 + n) * kDc + dim] = __float2bfloat16_rn(v);
        } else {
          a.part_o[(part_row0 + n) * kDc + dim] = v;
        }
      }
    }
    if (blk.slot >= 0 && wg == 0 && warp == 0 && lane < 4) {
      a.part_lse[part_row0 + n] = l[ci] > 0.0f ? m[ci] + __log2f(l[ci]) : -INFINITY;
    }
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <bool kBalanced>
__global__ void __launch_bounds__(kThreads, 1) mla_fa3_transposed_bf16_kernel(const __grid_constant__ Args a) {
  pdl_launch_dependents();  // the split merge (if any) waits on SMs as this grid's CTAs leave them
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const Ring ring{smem_addr(smem_raw)};
  if ((ring.smem & 1023) != 0) __trap();  // the swizzle atoms and descriptors assume it
  const int tid = static_cast<int>(threadIdx.x);
  const Segments<kBalanced> segs(a);
  if constexpr (!kBalanced) {
    if (is_empty_split(a, segs.at(a, 0), tid)) return;
  }
  if (tid == 0) {
    for (int slot = 0; slot < kSlots; ++slot) {
      mbar_init(ring.smem + BLayout::bars + 8 * slot, kProducerThreads);       // full
      mbar_init(ring.smem + BLayout::bars + 8 * (kSlots + slot), 128);         // empty: the owner warpgroup
    }
    mbar_init(ring.q_full(), kProducerThreads);
    mbar_init(ring.q_empty(), 2);
    for (int w = 0; w < 2; ++w) {
      mbar_init(ring.part_full(w), 128);
      mbar_init(ring.part_empty(w), 128);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (tid < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
    int round = 0;
    uint32_t it = 0;
    for (int i = 0; i < segs.size(); ++i) {
      const Block blk = segs.at(a, i);
      if (blk.num_tiles > 0) produce_segment(a, blk, ring, tid, round++, it);
    }
    cp_async_wait_all();
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
    // The warpgroup index through a shuffle, which ptxas knows to be warp-uniform.
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0) - 1;
    const int t = tid % 128;
    int round = 0;
    uint32_t it = 0;
    for (int i = 0; i < segs.size(); ++i) {
      const Block blk = segs.at(a, i);
      if (blk.num_tiles > 0) {
        consume_segment<kBalanced>(a, blk, ring, smem_raw, wg, t, round++, it);
      } else if (blk.slot >= 0 && wg == 0 && t < kCols && blk.j0 + t < a.rows) {
        // A partial with no key the block's rows see: the merge gives it no weight.
        a.part_lse[(static_cast<int64_t>(blk.b) * a.num_splits + blk.slot) * a.rows + blk.j0 + t] = -INFINITY;
      }
    }
  }
#else
  (void)a;
  __trap();  // sm_90a only; mla_fa3_available refuses other devices
#endif
}

}  // namespace transposed_bf16

template <bool kBalanced>
cudaError_t launch_mla_fa3_transposed_bf16(const Args& a, dim3 grid, cudaStream_t stream) {
  return launch_fa3_kernel<transposed_bf16::mla_fa3_transposed_bf16_kernel<kBalanced>>(
      a, grid, transposed_bf16::BLayout::bytes, stream);
}

template <bool kBalanced>
cudaError_t mla_fa3_transposed_bf16_attributes(cudaFuncAttributes* attributes) {
  return cudaFuncGetAttributes(attributes, transposed_bf16::mla_fa3_transposed_bf16_kernel<kBalanced>);
}

#define KBENCH_MLA_FA3_TRANSPOSED_BF16_VARIANT(kind, balanced)                                    \
  kind template cudaError_t launch_mla_fa3_transposed_bf16<balanced>(const Args&, dim3, cudaStream_t); \
  kind template cudaError_t mla_fa3_transposed_bf16_attributes<balanced>(cudaFuncAttributes*);
KBENCH_MLA_FA3_TRANSPOSED_BF16_VARIANT(extern, false)
KBENCH_MLA_FA3_TRANSPOSED_BF16_VARIANT(extern, true)

}  // namespace kbench::kernels::mla_fa3_detail
