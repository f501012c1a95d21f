// kbench's fa2 prefill-attention kernel: FlashAttention-2 style on mma.sync.m16n8k16 (sm_80+).
// Private to kernels/attention/prefill/sm80; launch_fa2 (prefill_fa2_launch.cu) reaches it through
// launch_head_dims, instantiated once per (dtype, head dims) in prefill_fa2_<dtype>_<dims>.cu.
//
// One CTA per work item (request, query head, rows [q_begin, q_end)), Tile (prefill_fa2.hpp) says
// how many warps and rows. Warp w owns rows [16 kMFrags w, 16 kMFrags (w + 1)) of the block and
// keeps their online-softmax state (row max m, partial row sums l, O accumulators in registers).
//
//  * Loads: Q [block_m][d_qk] and every KV tile (K [kBlockN][d_qk], V [kBlockN][d_vo]) reach
//    shared memory by 16-byte cp.async into rows of 16-byte chunks swizzled as chunk ^ (row & 7), so
//    that cp.async stores and ldmatrix reads are bank-conflict free. KV tiles go through a
//    kStages-deep ring: iteration j waits for tile j, then (after the one __syncthreads of the
//    iteration) issues tile j + kStages - 1 into the slot tile j - 1 used. Each tile row's K and V
//    byte offsets (page-table lookup for paged KV, any page size, NHD or HND) are computed by
//    threads 0 .. kBlockN-1 one iteration ahead: the page index load is issued at the start of
//    iteration j - kStages and its result written to shared memory at the end of it, so no global
//    load sits between a barrier and the cp.async issue. Rows past the KV length load the last
//    token (finite data, masked to -inf below); Q rows past q_end load row q_end - 1 and are never
//    written.
//  * S = Q K^T: Q fragments (A operand, ldmatrix.x4) either stay in registers (kQInRegs) or are
//    re-read from shared memory per k step; K fragments (B) by ldmatrix.x4, two n tiles of 8 keys
//    per load. fp32 accumulators.
//  * Masks: key j of query row i (within the request) is visible iff j <= max_key(i) =
//    causal ? min(kv_len - 1, i + kv_len - q_len) : kv_len - 1 (bottom-right aligned). The loop
//    stops after the last tile any row of the block sees; only tiles from the first one that some
//    row does not fully see are masked element by element; a warp skips the math of a tile none
//    of its rows sees.
//  * Online softmax in the log2 domain with scale = sm_scale q_scale k_scale log2(e) > 0: m = running
//    softmax base of scale * s (row max of the raw tile by quad shuffles, then one multiply),
//    p = ex2(s * scale - m) (one FFMA + MUFU per element). The base moves lazily: only when a tile's
//    row max passes it by more than kRescaleSlack (p stays <= 2^8), and O and l are rescaled by
//    ex2(m_old - m_new) only when some row of the warp moved; after the first tiles of a row that
//    is rare. A row that has seen no key keeps m = -inf and uses 0 as its base, so its p are 0.
//  * O += P V: the S accumulators of two n tiles are exactly the A fragment of 16 keys (packed to
//    bf16 / fp16 in registers); V fragments (B, keys on K) by ldmatrix.x4.trans.
//  * End: l summed over the quad, O scaled by v_scale / l (0 for rows without keys), converted to
//    out dtype, staged by each warp in its own Q rows and written with 16-byte stores; rows outside
//    [q_begin, q_end) are never written.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/mma_sm80.cuh"
#include "kernels/attention/prefill/sm80/prefill_fa2.hpp"
#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"

namespace kbench::kernels::prefill_fa2 {

// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile of kRowBytes-byte rows.
template <int kRowBytes>
__device__ __forceinline__ uint32_t swizzled(int row, int chunk) {
  return static_cast<uint32_t>(row * kRowBytes + ((chunk ^ (row & 7)) << 4));
}

// Copies kRows rows of kDim 16-bit elements into a swizzled shared tile by 16-byte cp.async: thread
// tid takes part tid % 8 of every 128-byte segment of rows tid / 8 + (kThreads / 8) r. These rows
// share row & 7, so every destination is one per-thread base plus an immediate. src_row(row): the
// global address of a row.
template <int kRows, int kDim, int kThreads, class SrcRow>
__device__ __forceinline__ void copy_rows(uint32_t dst, int tid, SrcRow src_row) {
  constexpr int kRowBytes = 2 * kDim;
  constexpr int kSegments = kRowBytes / 128;
  constexpr int kRowsPerPass = kThreads / 8;
  static_assert(kRows % kRowsPerPass == 0 && kRowsPerPass % 8 == 0, "whole passes of 8-row groups");
  const int row0 = tid >> 3;
  const int part = tid & 7;
  const uint32_t dst0 = dst + swizzled<kRowBytes>(row0, part);
#pragma unroll
  for (int r = 0; r < kRows / kRowsPerPass; ++r) {
    const uint8_t* const src = src_row(row0 + r * kRowsPerPass) + part * 16;
#pragma unroll
    for (int seg = 0; seg < kSegments; ++seg) {
      sm80::cp_async16(dst0 + r * kRowsPerPass * kRowBytes + seg * 128, src + seg * 128);
    }
  }
}

// How far (log2 units) a row max may pass the row's softmax base before O and l are rescaled.
inline constexpr float kRescaleSlack = 8.0f;

// ldmatrix column offsets: logical chunk 2 kk + b of a row whose lane-constant bits are `sel`
// (b ^ (row & 7)) sits at byte 128 (kk / 4) + (((2 (kk % 4)) ^ sel) << 4). The four per-lane values
// for kk % 4 are kept in registers; the rest is an immediate.
struct ChunkOffsets {
  uint32_t off[4];
  __device__ __forceinline__ explicit ChunkOffsets(int sel) {
#pragma unroll
    for (int i = 0; i < 4; ++i) off[i] = static_cast<uint32_t>(((2 * i) ^ sel) << 4);
  }
  __device__ __forceinline__ uint32_t operator()(int kk) const { return ((kk >> 2) << 7) + off[kk & 3]; }
};

template <bool kF16, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks) fa2_prefill_kernel(const Fa2Args a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // cp.async, ldmatrix and bf16 mma need sm_80: launch_fa2 never launches this here
#else
  using namespace sm80;
  constexpr int kThreads = Tile::kThreads;
  constexpr int kDQK = Tile::kHeadDimQk;
  constexpr int kDVO = Tile::kHeadDimVo;
  constexpr int kMF = Tile::kMFrags;
  constexpr int kBN = Tile::kBlockN;
  constexpr int kStages = Tile::kStages;
  constexpr int kKSteps = kDQK / 16;   // k steps of S = Q K^T
  constexpr int kSTiles = kBN / 8;     // n tiles of S
  constexpr int kOTiles = kDVO / 8;    // n tiles of O
  constexpr int kKeyBlocks = kBN / 16; // k steps of O += P V
  constexpr int kCprVo = kDVO / 8;     // per V / output row

  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t smem_base = smem_u32(smem);
  int64_t* const desc_k = reinterpret_cast<int64_t*>(smem + Tile::kDescOffset);  // [kStages][kBN]
  int64_t* const desc_v = desc_k + kStages * kBN;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int gr = lane >> 2;  // fragment row
  const int qd = lane & 3;   // fragment column pair

  pdl_wait();

  const PrefillWorkItem* const item = a.items + blockIdx.x;
  const int request = __ldg(&item->request);
  const int qo_head = __ldg(&item->qo_head);
  const int q_begin = __ldg(&item->q_begin);
  const int q_end = __ldg(&item->q_end);
  if (q_end <= q_begin) return;  // nothing to write (plans make no such items)
  const int qo_start = __ldg(a.qo_indptr + request);
  const int q_len = __ldg(a.qo_indptr + request + 1) - qo_start;
  const int kv_begin = __ldg(a.kv_indptr + request);
  const int kv_count = __ldg(a.kv_indptr + request + 1) - kv_begin;
  const int page_size = a.page_size;
  int kv_len = kv_count;
  if (a.paged) kv_len = kv_count > 0 ? (kv_count - 1) * page_size + __ldg(a.last_page_len + request) : 0;
  // Last key query row i sees (< 0: none): min(kv_len - 1, i + shift), shift = kv_len - q_len
  // (causal) or large enough never to bind.
  const int last_key = kv_len - 1;
  const int shift = a.causal ? kv_len - q_len : kv_len;
  auto max_key = [&](int i) { return min(last_key, i + shift); };
  const int n_tiles = (max(max_key(q_end - 1) + 1, 0) + kBN - 1) / kBN;
  const int n_unmasked = max(max_key(q_begin) + 1, 0) / kBN;  // tiles every row of the block sees whole

  const int kv_head = qo_head / a.group;
  const uint8_t* const k_head = a.k + kv_head * a.k_head_stride;
  const uint8_t* const v_head = a.v + kv_head * a.v_head_stride;

  // Threads 0 .. kBN-1: row index and K/V byte offsets of token row `tid` of tile `tile`.
  auto tile_token = [&](int tile) { return min(tile * kBN + tid, kv_len - 1); };
  auto token_row_index = [&](int token) {
    return a.paged ? __ldg(a.page_indices + kv_begin + token / page_size) : kv_begin + token;
  };
  auto store_desc = [&](int tile, int token, int row_index) {
    const int64_t slot_off = a.paged ? static_cast<int64_t>(token % page_size) * a.slot_stride : 0;
    desc_k[(tile % kStages) * kBN + tid] = row_index * a.k_row_stride + slot_off;
    desc_v[(tile % kStages) * kBN + tid] = row_index * a.v_row_stride + slot_off;
  };
  // All threads: tile `tile`'s K and V rows -> ring slot tile % kStages.
  auto issue_kv = [&](int tile) {
    const int slot = tile % kStages;
    const uint32_t k_dst = smem_base + Tile::kStageOffset + slot * Tile::kStageBytes;
    const int64_t* const dk = desc_k + slot * kBN;
    const int64_t* const dv = desc_v + slot * kBN;
    copy_rows<kBN, kDQK, kThreads>(k_dst, tid, [&](int row) { return k_head + dk[row]; });
    copy_rows<kBN, kDVO, kThreads>(k_dst + Tile::kKTileBytes, tid, [&](int row) { return v_head + dv[row]; });
  };

  // Per-lane ldmatrix addressing (see ChunkOffsets): the K (non-trans B) lane reads row
  // 8 ((lane >> 4) & 1) + (lane & 7), chunk bit (lane >> 3) & 1; Q (A) and V (trans B) lanes read
  // row 8 ((lane >> 3) & 1) + (lane & 7), chunk bit (lane >> 4) & 1.
  const ChunkOffsets k_chunk(((lane >> 3) & 1) ^ (lane & 7));
  const ChunkOffsets av_chunk(((lane >> 4) & 1) ^ (lane & 7));
  const uint32_t k_lane = static_cast<uint32_t>((((lane >> 4) & 1) * 8 + (lane & 7)) * Tile::kKRowBytes);
  const uint32_t v_lane =
      static_cast<uint32_t>(Tile::kKTileBytes + (((lane >> 3) & 1) * 8 + (lane & 7)) * Tile::kVRowBytes);
  const int warp_row0 = warp * 16 * kMF;
  const uint32_t q_lane = smem_base + Tile::kQOffset +
                          static_cast<uint32_t>((warp_row0 + ((lane >> 3) & 1) * 8 + (lane & 7)) * Tile::kQRowBytes);

  float o[kMF][kOTiles][4];
  float m[kMF][2];  // softmax base (log2 domain) of rows gr, gr + 8 of each m fragment
  float l[kMF][2];  // this thread's partial row sums
#pragma unroll
  for (int mf = 0; mf < kMF; ++mf) {
#pragma unroll
    for (int n = 0; n < kOTiles; ++n) o[mf][n][0] = o[mf][n][1] = o[mf][n][2] = o[mf][n][3] = 0.0f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      m[mf][h] = -INFINITY;
      l[mf][h] = 0.0f;
    }
  }
  const int warp_max_key = max_key(q_begin + warp_row0 + 16 * kMF - 1);
  // Where the warp's output rows go, parked in shared memory (read back after the KV loop) so that
  // no register holds them across it.
  struct WarpOut {
    uint8_t* row0;  // output row of block row warp_row0
    int rows;       // rows of the warp inside [q_begin, q_end)
  };
  WarpOut* const warp_out = reinterpret_cast<WarpOut*>(smem + Tile::kWarpOutOffset) + warp;
  if (lane == 0) {
    const int64_t out_row_stride = static_cast<int64_t>(a.num_qo_heads) * kDVO * 2;
    warp_out->row0 = a.out + (static_cast<int64_t>(qo_start) * a.num_qo_heads + qo_head) * kDVO * 2 +
                     (q_begin + warp_row0) * out_row_stride;
    warp_out->rows = min(q_end - q_begin - warp_row0, 16 * kMF);
  }
  const float scale = a.scale_log2;

  if (n_tiles > 0) {
    // Prologue: descriptors of tiles 0 .. kStages-1, Q (its own cp.async group), tiles 0 .. kStages-2.
    if (tid < kBN) {
#pragma unroll
      for (int t = 0; t < kStages; ++t) {
        if (t < n_tiles) {
          const int token = tile_token(t);
          store_desc(t, token, token_row_index(token));
        }
      }
    }
    {
      const int64_t q_row_stride = static_cast<int64_t>(a.num_qo_heads) * Tile::kQRowBytes;
      const uint8_t* const q_rows =
          a.q + (static_cast<int64_t>(qo_start) * a.num_qo_heads + qo_head) * Tile::kQRowBytes;
      copy_rows<Tile::kBlockM, kDQK, kThreads>(smem_base + Tile::kQOffset, tid, [&](int row) {
        return q_rows + min(q_begin + row, q_end - 1) * q_row_stride;
      });
      cp_async_commit();
    }
    __syncthreads();  // descriptors
#pragma unroll
    for (int t = 0; t < kStages - 1; ++t) {
      if (t < n_tiles) issue_kv(t);
      cp_async_commit();
    }
  }

  // Q fragments kept in registers: once Q (the oldest group) has landed.
  [[maybe_unused]] uint32_t qa[Tile::kQInRegs ? kMF : 1][Tile::kQInRegs ? kKSteps : 1][4];
  if constexpr (Tile::kQInRegs) {
    if (n_tiles > 0) {
      cp_async_wait<kStages - 1>();
      __syncthreads();
#pragma unroll
      for (int mf = 0; mf < kMF; ++mf) {
#pragma unroll
        for (int kk = 0; kk < kKSteps; ++kk) ldsm_x4(q_lane + mf * 16 * Tile::kQRowBytes + av_chunk(kk), qa[mf][kk]);
      }
    }
  }

  for (int j = 0; j < n_tiles; ++j) {
    // Page index of tile j + kStages: loaded now, stored to the descriptor ring at the end.
    const bool desc_ahead = tid < kBN && j + kStages < n_tiles;
    const int ahead_row = desc_ahead ? token_row_index(tile_token(j + kStages)) : 0;

    cp_async_wait<kStages - 2>();  // tile j has landed (this thread's part)
    __syncthreads();               // everyone's part; everyone is done with tile j - 1's slot
    if (j + kStages - 1 < n_tiles) issue_kv(j + kStages - 1);
    cp_async_commit();

    const int key0 = j * kBN;
    if (key0 <= warp_max_key) {
      const uint32_t k_tile = smem_base + Tile::kStageOffset + (j % kStages) * Tile::kStageBytes;

      // S = Q K^T.
      float s[kMF][kSTiles][4];
#pragma unroll
      for (int mf = 0; mf < kMF; ++mf) {
#pragma unroll
        for (int n = 0; n < kSTiles; ++n) s[mf][n][0] = s[mf][n][1] = s[mf][n][2] = s[mf][n][3] = 0.0f;
      }
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk) {
        uint32_t qf[kMF][4];
#pragma unroll
        for (int mf = 0; mf < kMF; ++mf) {
          if constexpr (Tile::kQInRegs) {
#pragma unroll
            for (int r = 0; r < 4; ++r) qf[mf][r] = qa[mf][kk][r];
          } else {
            ldsm_x4(q_lane + mf * 16 * Tile::kQRowBytes + av_chunk(kk), qf[mf]);
          }
        }
#pragma unroll
        for (int n2 = 0; n2 < kSTiles / 2; ++n2) {
          uint32_t b[4];
          ldsm_x4(k_tile + k_lane + n2 * 16 * Tile::kKRowBytes + k_chunk(kk), b);
#pragma unroll
          for (int mf = 0; mf < kMF; ++mf) {
            mma16816<kF16>(s[mf][2 * n2], qf[mf], b[0], b[1]);
            mma16816<kF16>(s[mf][2 * n2 + 1], qf[mf], b[2], b[3]);
          }
        }
      }

      // Mask where some row of the block does not see the whole tile.
      if (j >= n_unmasked) {
        const int thread_row0 = q_begin + warp_row0 + gr;
#pragma unroll
        for (int mf = 0; mf < kMF; ++mf) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            // Visible keys of this row, relative to the tile's first key: columns past it are masked.
            const int limit = max_key(thread_row0 + 16 * mf + 8 * h) - key0 - 2 * qd;
#pragma unroll
            for (int n = 0; n < kSTiles; ++n) {
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                if (8 * n + e > limit) s[mf][n][2 * h + e] = -INFINITY;
              }
            }
          }
        }
      }

      // Online softmax; the quad of lanes 4 gr .. 4 gr + 3 shares rows gr and gr + 8.
      bool moved = false;
      float corr[kMF][2];
#pragma unroll
      for (int mf = 0; mf < kMF; ++mf) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // Row max and sum by pairwise trees (not chains of dependent instructions).
          float part[kSTiles];
#pragma unroll
          for (int n = 0; n < kSTiles; ++n) part[n] = fmaxf(s[mf][n][2 * h], s[mf][n][2 * h + 1]);
#pragma unroll
          for (int w = 1; w < kSTiles; w *= 2) {
#pragma unroll
            for (int n = 0; n + w < kSTiles; n += 2 * w) part[n] = fmaxf(part[n], part[n + w]);
          }
          float mx = part[0];
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
          // Lazy rescaling: the row's base moves only when the tile's max exceeds it by more than
          // kRescaleSlack (always from -inf); otherwise p may reach 2^kRescaleSlack, harmless in
          // fp32 and in bf16 / fp16 P.
          const float m_tile = mx * scale;
          corr[mf][h] = 1.0f;
          if (m_tile > m[mf][h] + kRescaleSlack) {
            corr[mf][h] = ex2(m[mf][h] - m_tile);
            m[mf][h] = m_tile;
            moved = true;
          }
          const float base = m[mf][h] == -INFINITY ? 0.0f : m[mf][h];
#pragma unroll
          for (int n = 0; n < kSTiles; ++n) {
            s[mf][n][2 * h] = ex2(fmaf(s[mf][n][2 * h], scale, -base));
            s[mf][n][2 * h + 1] = ex2(fmaf(s[mf][n][2 * h + 1], scale, -base));
            part[n] = s[mf][n][2 * h] + s[mf][n][2 * h + 1];
          }
#pragma unroll
          for (int w = 1; w < kSTiles; w *= 2) {
#pragma unroll
            for (int n = 0; n + w < kSTiles; n += 2 * w) part[n] += part[n + w];
          }
          l[mf][h] = fmaf(l[mf][h], corr[mf][h], part[0]);
        }
      }
      if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
        for (int mf = 0; mf < kMF; ++mf) {
#pragma unroll
          for (int n = 0; n < kOTiles; ++n) {
            o[mf][n][0] *= corr[mf][0];
            o[mf][n][1] *= corr[mf][0];
            o[mf][n][2] *= corr[mf][1];
            o[mf][n][3] *= corr[mf][1];
          }
        }
      }

      // P as the A operand of 16 keys: the accumulators of S n tiles 2 kb and 2 kb + 1.
      uint32_t pa[kMF][kKeyBlocks][4];
#pragma unroll
      for (int mf = 0; mf < kMF; ++mf) {
#pragma unroll
        for (int kb = 0; kb < kKeyBlocks; ++kb) {
          pa[mf][kb][0] = pack2<kF16>(s[mf][2 * kb][0], s[mf][2 * kb][1]);
          pa[mf][kb][1] = pack2<kF16>(s[mf][2 * kb][2], s[mf][2 * kb][3]);
          pa[mf][kb][2] = pack2<kF16>(s[mf][2 * kb + 1][0], s[mf][2 * kb + 1][1]);
          pa[mf][kb][3] = pack2<kF16>(s[mf][2 * kb + 1][2], s[mf][2 * kb + 1][3]);
        }
      }

      // O += P V: ldmatrix.trans gives b0 / b1 = keys 16 kb + {0..7} / {8..15} of output n tile
      // 2 c16 and b2 / b3 those of n tile 2 c16 + 1.
#pragma unroll
      for (int kb = 0; kb < kKeyBlocks; ++kb) {
#pragma unroll
        for (int c16 = 0; c16 < kDVO / 16; ++c16) {
          uint32_t b[4];
          ldsm_x4_trans(k_tile + v_lane + kb * 16 * Tile::kVRowBytes + av_chunk(c16), b);
#pragma unroll
          for (int mf = 0; mf < kMF; ++mf) {
            mma16816<kF16>(o[mf][2 * c16], pa[mf][kb], b[0], b[1]);
            mma16816<kF16>(o[mf][2 * c16 + 1], pa[mf][kb], b[2], b[3]);
          }
        }
      }
    }

    if (desc_ahead) store_desc(j + kStages, tile_token(j + kStages), ahead_row);
  }

  pdl_launch_dependents();

  // ---- Output: v_scale / l (0 for rows without keys), staged in the warp's own Q rows (no other
  // warp reads them; every cp.async into them completed before the first loop barrier).
  cp_async_wait<0>();
  __syncwarp();
  const bool out_f16 = a.out_f16 != 0;
#pragma unroll
  for (int mf = 0; mf < kMF; ++mf) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float row_sum = l[mf][h];
      row_sum += __shfl_xor_sync(0xffffffffu, row_sum, 1);
      row_sum += __shfl_xor_sync(0xffffffffu, row_sum, 2);
      const float inv = row_sum > 0.0f ? a.v_scale / row_sum : 0.0f;
      const int row = warp_row0 + 16 * mf + 8 * h + gr;
      uint8_t* const row_smem = smem + Tile::kQOffset + row * Tile::kQRowBytes + 4 * qd;
#pragma unroll
      for (int n = 0; n < kOTiles; ++n) {
        const float x = o[mf][n][2 * h] * inv;
        const float y = o[mf][n][2 * h + 1] * inv;
        *reinterpret_cast<uint32_t*>(row_smem + ((n ^ (row & 7)) << 4)) =
            out_f16 ? pack2<true>(x, y) : pack2<false>(x, y);
      }
    }
  }
  __syncwarp();
  {
    const int64_t out_row_stride = static_cast<int64_t>(a.num_qo_heads) * kDVO * 2;
    uint8_t* const out_row0 = warp_out->row0;
    const int rows = warp_out->rows;
#pragma unroll
    for (int i = 0; i < 16 * kMF * kCprVo / 32; ++i) {
      const int c = lane + 32 * i;
      const int row = c / kCprVo;
      const int chunk = c % kCprVo;
      if (row < rows) {
        const uint4 val = *reinterpret_cast<const uint4*>(smem + Tile::kQOffset +
                                                          swizzled<Tile::kQRowBytes>(warp_row0 + row, chunk));
        *reinterpret_cast<uint4*>(out_row0 + row * out_row_stride + chunk * 16) = val;
      }
    }
  }
#endif
}

// ------------------------------------------------------------------------------------------------
// Host side
// ------------------------------------------------------------------------------------------------

template <bool kF16, class Tile>
cudaError_t launch_tile(const Fa2Args& args, int num_items, bool pdl, cudaStream_t stream) {
  void (*kernel)(Fa2Args) = fa2_prefill_kernel<kF16, Tile>;
  const cudaError_t status = ensure_smem_limit<fa2_prefill_kernel<kF16, Tile>>(Tile::kSmemBytes);
  if (status != cudaSuccess) return status;
  return launch_kernel(kernel, dim3(static_cast<unsigned>(num_items), 1, 1), dim3(Tile::kThreads, 1, 1),
                       Tile::kSmemBytes, stream, pdl, args);
}

template <bool kF16, int kHeadDimQk, int kHeadDimVo>
cudaError_t launch_head_dims(const Fa2Args& args, int num_items, bool pdl, cudaStream_t stream) {
  return launch_tile<kF16, typename Fa2TileFor<kHeadDimQk, kHeadDimVo>::type>(args, num_items, pdl, stream);
}

}  // namespace kbench::kernels::prefill_fa2
