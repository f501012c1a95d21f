// kbench's MLA decode kernel "fa3" for Hopper (sm_90a): wgmma from shared memory, a producer
// warpgroup that gathers the paged latent cache with cp.async completing on mbarriers, two consumer
// warpgroups that score alternate KV tiles (ping-pong) and split the 512-wide V / output between
// them. bfloat16 q and caches, head dims 512 (ckv, = V) / 64 (kpe). FlashMLA's sm90 decode is the
// model.
//
// Grid (num_splits, row_blocks, batch), 384 threads. A CTA takes 64 query rows of one request (row
// j = token i * num_heads + head h: the request's rows in memory order, several tokens may share a
// CTA; rows past the request's last are computed on zeros and never stored) and the keys
// [split * split_keys, ...) of that request, visible to the block's last row. The latent cache is
// read once per row block, every tile serving as K (576 wide) and as V (its first 512 columns).
//
// Shared memory (1024-byte aligned, 128-byte swizzle: [64-element column chunk][64 rows][128 B], the
// layout wgmma descriptors read K-major, and MN-major for V):
//   Q [9 chunks][64 rows] (q_nope | q_pe, 72 KB), a 2-stage ring of KV tiles [9 chunks][64 keys]
//   (ckv | kpe, 72 KB each), one P tile [64 rows][64 keys] bf16 (8 KB), the latest tile's row maxima
//   and rescale factors, the warpgroups' row sums, mbarriers: 226 KB, one CTA per SM.
// Warp roles:
//  * producer (warpgroup 0, setmaxnreg 56): cp.async of Q (zero-filled past the request's rows,
//    arrivals on q_full), then per 64-key tile: wait for the stage to be free (kv_empty), copy it
//    chunk by chunk (thread tid copies 16 bytes tid % 8 of keys tid / 8 + 16 p, p < 4: 8 lanes per
//    128-byte line; keys past the range zero-filled), each chunk arriving on its own kv_full barrier
//    as it lands, so the consumer's S starts on the first chunk instead of the whole 72 KB. The
//    thread's page-table entries for tile t + 1 are read while tile t is issued. Any page size.
//  * consumers (warpgroups 1 and 2, setmaxnreg 224): warpgroup w scores tiles t = w, w + 2, ...
//    (S = Q K^T on wgmma 64 x 64 x 576, Q read once per tile) and owns output columns
//    [256 w, 256 w + 256) of every tile. Per own tile t:
//      1. issue S(t) chunk by chunk as the chunks land;
//      2. wait until the other warpgroup published tile t - 1 (named barrier "ready"), and for S(t):
//         O *= alpha(t-1), O += P(t-1) V(t-1) from the shared P tile (SS), left running;
//      3. mask (the row's causal bound kv_len - s_qo + 1 + i and the split end, only on tiles that
//         reach it), m(t) = max(m(t-1), row max), alpha(t) = 2^(m(t-1) - m(t)), P(t) = 2^(s - m(t));
//      4. PV(t-1) done (the shared P tile is free, release stage t - 1): store P(t) as bf16,
//         alpha(t), m(t) to shared memory for the other warpgroup, "ready";
//      5. O *= alpha(t), O += P(t) V(t) with P(t) as A fragments in registers (RS); waited for at
//         once, then stage t is released (the next own tile refills it).
//    The tensor cores run one warpgroup's S and PV while the other does its softmax; the max chain
//    m(t - 1) -> m(t) is the only serial dependency between tiles. "ready" of tile t + 2 needs the
//    other warpgroup's "ready" of t + 1, which comes after it read P(t), alpha(t), m(t): one P tile
//    and one max / alpha buffer serve every tile. A warpgroup's row sum covers its own tiles,
//    rescaled by every tile's alpha.
// End: the warpgroups add their row sums; o = ckv_scale * O / l as bf16 (one split), or the
// normalised partial O and the log2-sum-exp for mla_split's merge.
#include "kernels/attention/mla/mla_fa3.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/common/hopper.cuh"
#include "kernels/common/kernel_image.hpp"
#include "kernels/common/launch.hpp"
#include "kernels/common/mma_sm80.cuh"

namespace kbench::kernels {
namespace mla_fa3_detail {

constexpr int kDc = 512;            // latent (ckv) dim = V dim = output dim
constexpr int kDp = 64;             // rope (kpe) dim
constexpr int kRows = 64;           // query rows per CTA: one wgmma M
constexpr int kTile = 64;           // keys per KV tile
constexpr int kChunks = 9;          // 64-element (128-byte) column chunks of a 576-wide row
constexpr int kChunkBytes = 64 * 128;  // one column chunk of 64 rows
constexpr int kBlockBytes = kChunks * kChunkBytes;  // Q, or one KV stage: 72 KB
constexpr int kStages = 2;
constexpr int kThreads = 384;
constexpr int kProducerRegs = 56;
constexpr int kConsumerRegs = 224;
static_assert(128 * kProducerRegs + 256 * kConsumerRegs <= kThreads * (65536 / kThreads / 8 * 8), "register pool");
// Named barriers (0 is __syncthreads), 256 consumer threads each.
constexpr int kReadyBarrier = 1;  // + w: warpgroup w published its latest tile's P, alpha and max
constexpr int kSumBarrier = 3;    // row sums written, at the end
constexpr float kLog2e = 1.4426950408889634f;

struct Layout {
  static constexpr int q = 0;
  static constexpr int kv = q + kBlockBytes;
  static constexpr int p = kv + kStages * kBlockBytes;
  static constexpr int row_max = p + kRows * 128;  // [64 rows] fp32, the latest tile's running max
  static constexpr int row_alpha = row_max + kRows * 4;  // [64 rows] fp32, its rescale factors
  static constexpr int row_sum = row_alpha + kRows * 4;  // [2 warpgroups][64 rows] fp32
  static constexpr int bars = row_sum + 2 * kRows * 4;   // q_full, kv_full[stages][chunks], kv_empty[stages]
  static constexpr int bytes = bars + 8 * (1 + kStages * kChunks + kStages);
};
static_assert(Layout::bytes <= 227 * 1024, "shared memory per block");

struct Args {
  const __nv_bfloat16* q_nope;
  const __nv_bfloat16* q_pe;
  const __nv_bfloat16* ckv;
  const __nv_bfloat16* kpe;
  const int32_t* kv_indptr;
  const int32_t* kv_indices;
  const int32_t* kv_len;
  __nv_bfloat16* out;
  float* part_o;    // [batch][num_splits][rows][512] (num_splits > 1)
  float* part_lse;  // [batch][num_splits][rows], log2 units
  int s_qo;
  int num_heads;
  int rows;  // s_qo * num_heads
  int page_size;
  int num_splits;
  int split_keys;
  float scale_log2;  // sm_scale * q_scale * ckv_scale * log2(e)
  float v_scale;     // ckv_scale
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using namespace ::kbench::kernels::hopper;

// Byte offset of 16-byte chunk `chunk` (0..71) of row `row` in a swizzled [9][64][128 B] block.
__device__ __forceinline__ uint32_t swizzled(int row, int chunk) {
  return (chunk >> 3) * kChunkBytes + row * 128 + (((chunk & 7) ^ (row & 7)) << 4);
}

struct Barriers {
  uint32_t base;
  __device__ uint32_t q_full() const { return base; }
  __device__ uint32_t kv_full(int s, int chunk) const { return base + 8 * (1 + s * kChunks + chunk); }
  __device__ uint32_t kv_empty(int s) const { return base + 8 * (1 + kStages * kChunks + s); }
};

// The request's rows [j0, j0 + 64) and keys [k_begin, k_end) of this CTA.
struct Block {
  int b;
  int j0;
  int kv_len;
  int k_begin;
  int k_end;
  int num_tiles;
};

__device__ __forceinline__ void run_producer(const Args& a, const Block& blk, uint32_t smem, const Barriers& bars,
                                             int tid) {
  // Q: thread tid copies ckv chunk tid % 64 of rows tid / 64 + 2 i and kpe chunk tid % 8 of rows
  // tid / 8 + 16 i (consecutive threads, consecutive 16 bytes).
  {
    const int64_t row0 = static_cast<int64_t>(blk.b) * a.rows + blk.j0;
#pragma unroll 4
    for (int i = 0; i < kRows / 2; ++i) {
      const int r = tid / 64 + 2 * i, ch = tid % 64;
      const bool valid = blk.j0 + r < a.rows;
      const __nv_bfloat16* src = valid ? a.q_nope + (row0 + r) * kDc + ch * 8 : a.q_nope;
      cp_async_16(smem + Layout::q + swizzled(r, ch), src, valid ? 16u : 0u);
    }
#pragma unroll
    for (int i = 0; i < kRows / 16; ++i) {
      const int r = tid / 8 + 16 * i, ch = tid % 8;
      const bool valid = blk.j0 + r < a.rows;
      const __nv_bfloat16* src = valid ? a.q_pe + (row0 + r) * kDp + ch * 8 : a.q_pe;
      cp_async_16(smem + Layout::q + swizzled(r, 64 + ch), src, valid ? 16u : 0u);
    }
    cp_async_arrive_noinc(bars.q_full());
  }
  const int32_t* pages = a.kv_indices + a.kv_indptr[blk.b];
  // Thread tid copies 16-byte piece tid % 8 of every 128-byte chunk of keys tid / 8 + 16 p: 8 lanes
  // per line, 4 keys per warp instruction.
  constexpr int kKeysPerThread = kTile / 16;
  const int piece = tid % 8;
  // Cache rows of the thread's keys of tile `tile`; -1 past the range.
  auto cache_rows = [&](int tile, int (&rows)[kKeysPerThread]) {
#pragma unroll
    for (int p = 0; p < kKeysPerThread; ++p) {
      const int t = blk.k_begin + tile * kTile + tid / 8 + 16 * p;
      rows[p] = t < blk.k_end ? __ldg(pages + t / a.page_size) * a.page_size + t % a.page_size : -1;
    }
  };
  int next_rows[kKeysPerThread];
  cache_rows(0, next_rows);
  for (int tile = 0; tile < blk.num_tiles; ++tile) {
    const int s = tile % kStages;
    int rows[kKeysPerThread];
#pragma unroll
    for (int p = 0; p < kKeysPerThread; ++p) rows[p] = next_rows[p];
    if (tile + 1 < blk.num_tiles) cache_rows(tile + 1, next_rows);  // in flight while this tile is issued
    mbar_wait(bars.kv_empty(s), ((tile / kStages) & 1) ^ 1);
    const uint32_t stage = smem + Layout::kv + s * kBlockBytes;
#pragma unroll 1
    for (int chunk = 0; chunk < kChunks; ++chunk) {
#pragma unroll
      for (int p = 0; p < kKeysPerThread; ++p) {
        const bool valid = rows[p] >= 0;
        const int64_t row = valid ? rows[p] : 0;
        const __nv_bfloat16* src = chunk < kChunks - 1 ? a.ckv + row * kDc + chunk * 64 : a.kpe + row * kDp;
        cp_async_16(stage + swizzled(tid / 8 + 16 * p, chunk * 8 + piece), src + piece * 8, valid ? 16u : 0u);
      }
      cp_async_arrive_noinc(bars.kv_full(s, chunk));
    }
  }
  cp_async_wait_all();
}

using QkOp = decltype(cute::SM90::GMMA::ss_op_selector<cute::bfloat16_t, cute::bfloat16_t, float,
                                                       cute::Shape<cute::_64, cute::_64, cute::_16>,
                                                       cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::K>());
// PV of the other warpgroup's tile: P from the shared P tile.
using PvSharedOp = decltype(cute::SM90::GMMA::ss_op_selector<cute::bfloat16_t, cute::bfloat16_t, float,
                                                             cute::Shape<cute::_64, cute::_256, cute::_16>,
                                                             cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::MN>());
// PV of the warpgroup's own tile: P from registers.
using PvRegsOp = decltype(cute::SM90::GMMA::rs_op_selector<cute::bfloat16_t, cute::bfloat16_t, float,
                                                           cute::Shape<cute::_64, cute::_256, cute::_16>,
                                                           cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::MN>());

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

__device__ __forceinline__ void run_consumer(const Args& a, const Block& blk, uint32_t smem, float* row_max,
                                             float* row_alpha, float* row_sum, const Barriers& bars, int wg, int t) {
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
  auto stage_of = [&](int tile) { return smem + Layout::kv + (tile % kStages) * kBlockBytes; };
  auto release = [&](int tile) {
    if (t == 0) mbar_arrive(bars.kv_empty(tile % kStages));
  };
  // This warpgroup's V columns [256 wg, 256 wg + 256) of a stage: chunks 4 wg .. 4 wg + 3, N-major
  // (64-column chunks kChunkBytes apart); k-steps of 16 keys are 2048 bytes apart.
  auto v_desc = [&](int tile) { return smem_desc(stage_of(tile) + 4 * wg * kChunkBytes, kChunkBytes, 1024); };

  float o[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) o[i] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY;  // running maxima after the latest tile, log2 units
  float l0 = 0.0f, l1 = 0.0f;            // this thread's share of the sums over the warpgroup's tiles
  uint32_t p[16] = {};                   // P of the own tile as wgmma A fragments (k-step kk: p[4 kk ..])
  const uint64_t q_desc = smem_desc(smem + Layout::q, 16, 1024);
  const uint64_t p_desc = smem_desc(smem + Layout::p, 16, 1024);
  const int other = wg ^ 1;
  mbar_wait(bars.q_full(), 0);

  // Iteration t: the own tile t (t < num_tiles) and the other warpgroup's tile t - 1 (t >= 1).
  for (int tile = wg; tile <= blk.num_tiles; tile += 2) {
    const bool own = tile < blk.num_tiles;
    // 1. S(tile), chunk by chunk as the chunks land.
    float sc[32];
    if (own) {
      const int parity = (tile / kStages) & 1;
      const uint64_t k_desc = smem_desc(stage_of(tile), 16, 1024);
#pragma unroll
      for (int chunk = 0; chunk < kChunks; ++chunk) {
        mbar_wait(bars.kv_full(tile % kStages, chunk), parity);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const uint32_t off = chunk * kChunkBytes + k * 32;
          gmma_ss<QkOp>(q_desc + (off >> 4), k_desc + (off >> 4), sc, chunk + k > 0, std::make_index_sequence<32>{});
        }
      }
      wgmma_commit();
    }
    // 2. The other warpgroup's tile - 1: O *= alpha(tile - 1) once S(tile) is done (no register of a
    //    running wgmma may change), then O += P V on this warpgroup's columns, running while this
    //    warpgroup does its softmax.
    if (tile > 0) {
      named_sync(kReadyBarrier + other, 256);
      const float alpha0 = row_alpha[r0], alpha1 = row_alpha[r0 + 8];
      m0 = row_max[r0];
      m1 = row_max[r0 + 8];
      wgmma_wait<0>();
      fence_regs(o);
      scale_rows(o, alpha0, alpha1);
      l0 *= alpha0;
      l1 *= alpha1;
      const uint64_t vd = v_desc(tile - 1);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) {
        gmma_ss<PvSharedOp>(p_desc + ((kk * 32) >> 4), vd + ((kk * 2048) >> 4), o, true,
                            std::make_index_sequence<128>{});
      }
      wgmma_commit();
    }
    if (!own) break;

    // 3. S(tile) done: mask, max chain, P.
    if (tile == 0) wgmma_wait<0>();
    fence_regs(sc);
    const int tile_key0 = blk.k_begin + tile * kTile;
    const bool masked = tile_key0 + kTile > mask_from;
    float mx0 = m0, mx1 = m1;
#pragma unroll
    for (int n = 0; n < 8; ++n) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int key = tile_key0 + 8 * n + 2 * quad + c;
        sc[4 * n + c] = masked && key >= end0 ? -INFINITY : sc[4 * n + c] * a.scale_log2;
        sc[4 * n + 2 + c] = masked && key >= end1 ? -INFINITY : sc[4 * n + 2 + c] * a.scale_log2;
        mx0 = fmaxf(mx0, sc[4 * n + c]);
        mx1 = fmaxf(mx1, sc[4 * n + 2 + c]);
      }
    }
    const auto max_op = [](float x, float y) { return fmaxf(x, y); };
    mx0 = quad_reduce(mx0, max_op);
    mx1 = quad_reduce(mx1, max_op);
    // A row with no key yet keeps max -inf: subtract 0 instead (its P are all 2^-inf = 0).
    const float base0 = mx0 == -INFINITY ? 0.0f : mx0;
    const float base1 = mx1 == -INFINITY ? 0.0f : mx1;
    const float alpha0 = sm80::ex2(m0 - base0), alpha1 = sm80::ex2(m1 - base1);
    m0 = mx0;
    m1 = mx1;
    float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      sc[4 * n] = sm80::ex2(sc[4 * n] - base0);
      sc[4 * n + 1] = sm80::ex2(sc[4 * n + 1] - base0);
      sc[4 * n + 2] = sm80::ex2(sc[4 * n + 2] - base1);
      sc[4 * n + 3] = sm80::ex2(sc[4 * n + 3] - base1);
      sum0 += sc[4 * n] + sc[4 * n + 1];
      sum1 += sc[4 * n + 2] + sc[4 * n + 3];
    }
    l0 = fmaf(l0, alpha0, sum0);
    l1 = fmaf(l1, alpha1, sum1);

    // 4. PV(tile - 1) done: the shared P tile is free and this warpgroup is done with stage tile - 1.
    if (tile > 0) {
      wgmma_wait<0>();
      fence_regs(o);
      release(tile - 1);
    }
    // Keys 8 n + 2 quad (+1) of rows r0 and r0 + 8: k-step n / 2, its low or high 8 keys.
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      p[4 * (n / 2) + 2 * (n % 2)] = pack2<true>(sc[4 * n], sc[4 * n + 1]);
      p[4 * (n / 2) + 2 * (n % 2) + 1] = pack2<true>(sc[4 * n + 2], sc[4 * n + 3]);
    }
    // P[row][key]: 16-byte chunk key / 8 of the row, swizzled.
    const uint32_t p_row0 = smem + Layout::p + r0 * 128 + quad * 4;
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      const uint32_t swz = (n ^ (r0 & 7)) << 4;
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(p_row0 + swz), "r"(p[4 * (n / 2) + 2 * (n % 2)]) : "memory");
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(p_row0 + 8 * 128 + swz), "r"(p[4 * (n / 2) + 2 * (n % 2) + 1])
                   : "memory");
    }
    if (quad == 0) {
      row_max[r0] = m0;
      row_max[r0 + 8] = m1;
      row_alpha[r0] = alpha0;
      row_alpha[r0 + 8] = alpha1;
    }
    fence_proxy_async();  // P's generic-proxy stores, read next by the other warpgroup's wgmma
    named_arrive(kReadyBarrier + wg, 256);

    // 5. O = alpha O + P V on this warpgroup's columns, P from registers. Waited for at once: the
    //    stage it reads is the next own tile's, and ptxas serializes every wgmma if one with register
    //    operands stays in flight across the loop's back edge.
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
  }
  // The other warpgroup's last tile (step 2 of the final iteration, which broke out of the loop).
  if ((blk.num_tiles - 1) % 2 == other) {
    wgmma_wait<0>();
    fence_regs(o);
    release(blk.num_tiles - 1);
  }

  // Epilogue: the row sums of both warpgroups (both rescaled to the final maxima, so they add).
  l0 = quad_reduce(l0, [](float x, float y) { return x + y; });
  l1 = quad_reduce(l1, [](float x, float y) { return x + y; });
  if (quad == 0) {
    row_sum[wg * kRows + r0] = l0;
    row_sum[wg * kRows + r0 + 8] = l1;
  }
  named_sync(kSumBarrier, 256);
  l0 += row_sum[other * kRows + r0];
  l1 += row_sum[other * kRows + r0 + 8];
  const int64_t part_row0 = (static_cast<int64_t>(blk.b) * a.num_splits + blockIdx.x) * a.rows + blk.j0;
  const int64_t out_row0 = static_cast<int64_t>(blk.b) * a.rows + blk.j0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = r0 + 8 * h;
    if (blk.j0 + r >= a.rows) continue;
    const float l = h == 0 ? l0 : l1;
    const float m = h == 0 ? m0 : m1;
    const float inv = l > 0.0f ? a.v_scale / l : 0.0f;
    const int col0 = wg * 256 + 2 * quad;
    if (a.num_splits == 1) {
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

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

__global__ void __launch_bounds__(kThreads, 1) mla_fa3_kernel(const __grid_constant__ Args a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t smem = smem_addr(smem_raw);
  if ((smem & 1023) != 0) __trap();  // the swizzle atoms and descriptors assume it
  const int tid = static_cast<int>(threadIdx.x);
  Block blk;
  blk.b = static_cast<int>(blockIdx.z);
  blk.j0 = static_cast<int>(blockIdx.y) * kRows;
  blk.kv_len = a.kv_len[blk.b];
  const int j_last = min(blk.j0 + kRows, a.rows) - 1;
  blk.k_begin = static_cast<int>(blockIdx.x) * a.split_keys;
  blk.k_end = min(min(blk.kv_len, blk.kv_len - a.s_qo + 1 + j_last / a.num_heads), blk.k_begin + a.split_keys);
  if (blk.k_end <= blk.k_begin) {  // an empty split (split 0 never is: every row sees key 0)
    const int64_t part_row0 = (static_cast<int64_t>(blk.b) * a.num_splits + blockIdx.x) * a.rows + blk.j0;
    if (a.num_splits > 1 && tid < kRows && blk.j0 + tid < a.rows) a.part_lse[part_row0 + tid] = -INFINITY;
    return;
  }
  blk.num_tiles = (blk.k_end - blk.k_begin + kTile - 1) / kTile;
  const Barriers bars{smem + Layout::bars};
  if (tid == 0) {
    mbar_init(bars.q_full(), 128);  // every producer thread, as its copies land
    for (int s = 0; s < kStages; ++s) {
      for (int chunk = 0; chunk < kChunks; ++chunk) mbar_init(bars.kv_full(s, chunk), 128);
      mbar_init(bars.kv_empty(s), 2);  // one thread per consumer warpgroup
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (tid < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
    run_producer(a, blk, smem, bars, tid);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
    run_consumer(a, blk, smem, reinterpret_cast<float*>(smem_raw + Layout::row_max),
                 reinterpret_cast<float*>(smem_raw + Layout::row_alpha),
                 reinterpret_cast<float*>(smem_raw + Layout::row_sum), bars, tid / 128 - 1, tid % 128);
  }
#else
  (void)a;
  __trap();  // fa3 needs sm_90a (wgmma, setmaxnreg); mla_fa3_available refuses other devices
#endif
}

}  // namespace mla_fa3_detail

using namespace mla_fa3_detail;

bool mla_fa3_dtypes_supported(DType q, DType kv) { return q == DType::bfloat16 && kv == DType::bfloat16; }

bool mla_fa3_supported(const MlaParams& p) {
  return mla_fa3_dtypes_supported(p.q_dtype, p.kv_dtype) && p.head_dim_ckv == kDc && p.head_dim_kpe == kDp &&
         p.batch >= 0 && p.batch <= 65535 && p.s_qo >= 1 && p.num_heads >= 1 && p.page_size >= 1 &&
         static_cast<int64_t>(p.s_qo) * p.num_heads <= (1 << 20) && p.ckv_scale == p.kpe_scale &&
         std::isfinite(p.sm_scale) && std::isfinite(p.q_scale) && std::isfinite(p.ckv_scale);
}

cudaError_t mla_fa3_available() {
  int device = 0, major = 0, minor = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess) status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (status == cudaSuccess) status = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (status != cudaSuccess) return status;
  if (major != 9 || minor != 0) return cudaErrorNoKernelImageForDevice;  // wgmma and setmaxnreg: sm_90a only
#if defined(KBENCH_MLA_FA3_BUILT_FOR_SM90A)
  cudaFuncAttributes attributes{};
  return kernel_image_status(cudaFuncGetAttributes(&attributes, mla_fa3_kernel));
#else
  return cudaErrorNoKernelImageForDevice;  // built without sm_90a (sources.cmake): the body would trap
#endif
}

MlaPlan plan_mla_fa3(const MlaParams& p, int max_kv_len, int sm_count) {
  return plan_mla_split(p, kRows, 1, kTile, max_kv_len, sm_count);
}

cudaError_t launch_mla_fa3(const MlaParams& p, const MlaPlan& plan, void* out, void* workspace,
                           cudaStream_t stream) {
  if (!mla_fa3_supported(p) || plan.rows_per_cta != kRows || plan.num_splits < 1 || plan.split_keys < kTile ||
      plan.split_keys % kTile != 0) {
    return cudaErrorInvalidValue;
  }
  if (p.batch == 0) return cudaSuccess;
  if (p.q_nope == nullptr || p.q_pe == nullptr || p.ckv == nullptr || p.kpe == nullptr || p.kv_indptr == nullptr ||
      p.kv_indices == nullptr || p.kv_len == nullptr || out == nullptr ||
      (plan.num_splits > 1 && workspace == nullptr)) {
    return cudaErrorInvalidValue;
  }
  Args a{};
  a.q_nope = static_cast<const __nv_bfloat16*>(p.q_nope);
  a.q_pe = static_cast<const __nv_bfloat16*>(p.q_pe);
  a.ckv = static_cast<const __nv_bfloat16*>(p.ckv);
  a.kpe = static_cast<const __nv_bfloat16*>(p.kpe);
  a.kv_indptr = p.kv_indptr;
  a.kv_indices = p.kv_indices;
  a.kv_len = p.kv_len;
  a.out = static_cast<__nv_bfloat16*>(out);
  a.s_qo = p.s_qo;
  a.num_heads = p.num_heads;
  a.rows = p.s_qo * p.num_heads;
  a.page_size = p.page_size;
  a.num_splits = plan.num_splits;
  a.split_keys = plan.split_keys;
  a.scale_log2 = p.sm_scale * p.q_scale * p.ckv_scale * kLog2e;
  a.v_scale = p.ckv_scale;
  if (plan.num_splits > 1) {
    const std::size_t slots = static_cast<std::size_t>(p.batch) * plan.num_splits * a.rows;
    a.part_o = static_cast<float*>(workspace);
    a.part_lse = a.part_o + slots * kDc;
  }
  static std::atomic<uint64_t> smem_done{0};
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  status = ensure_smem_limit(mla_fa3_kernel, Layout::bytes, device, smem_done);
  if (status != cudaSuccess) return status;
  const int row_blocks = (a.rows + kRows - 1) / kRows;
  const dim3 grid(static_cast<unsigned>(plan.num_splits), static_cast<unsigned>(row_blocks),
                  static_cast<unsigned>(p.batch));
  status = launch_kernel(mla_fa3_kernel, grid, dim3(kThreads), Layout::bytes, stream, false, a);
  if (status != cudaSuccess || plan.num_splits == 1) return status;
  return launch_mla_merge(p, plan, workspace, out, stream);
}

}  // namespace kbench::kernels
