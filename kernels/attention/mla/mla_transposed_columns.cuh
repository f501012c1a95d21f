// The online softmax of fa3's keys-on-M kernels (mla_fa3_transposed_kernel.cuh for fp8 KV,
// mla_fa3_transposed_bf16_kernel.cuh for bf16): a consumer warpgroup's S^T fragment of one tile, 64
// keys (wgmma's M) x 16 query rows (N: the columns), in wgmma's accumulator layout. A thread holds
// s[i], i = 0..7: key r + 8 ((i / 2) % 2) of column col(2 (i / 4) + i % 2), col(ci) = 8 (ci / 2) + 2
// quad + ci % 2, where r is the thread's first key (a kernel may permute the keys within their 8-row
// groups). The softmax runs over each column's keys: its maxima and sums over the warpgroup (the
// thread's two keys, its 8 lanes of the same quad position, then the 4 warps through shared memory).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/attention/mla/mla_fa3_kernel.cuh"
#include "kernels/common/hopper.cuh"
#include "kernels/common/mma_sm80.cuh"

namespace kbench::kernels::mla_fa3_detail {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

struct TransposedColumns {
  static constexpr int kCols = kTransposedMaxRows;
  int warp;
  int lane;
  int r;          // the thread's first key (its second: r + 8)
  float* red;     // the warpgroup's [4 warps][16] fp32 column maxima
  int barrier;    // the warpgroup's named barrier (its 128 threads)

  __device__ int col(int ci) const { return 8 * (ci / 2) + 2 * (lane % 4) + ci % 2; }
  __device__ static int column_index(int i) { return 2 * (i / 4) + i % 2; }
  __device__ int key(int i) const { return r + 8 * ((i / 2) % 2); }

  // The keys each of the thread's columns sees in the block's segment (columns past the request's
  // rows: all, never stored), and column 0's (the fewest: tiles reaching past it need masks).
  __device__ void key_ends(const Args& a, const Block& blk, int (&end)[4], int& mask_from) const {
#pragma unroll
    for (int ci = 0; ci < 4; ++ci) {
      const int j = blk.j0 + col(ci);
      end[ci] = j < a.rows ? min(blk.kv_len - a.s_qo + 1 + j / a.num_heads, blk.k_end) : blk.k_end;
    }
    mask_from = min(blk.kv_len - a.s_qo + 1 + blk.j0 / a.num_heads, blk.k_end);
  }

  // Scores (log2 units) of the tile's keys key0 + ..: where the tile is `masked`, a key at or past
  // its column's end is -inf.
  __device__ void mask(float (&s)[8], int key0, bool masked, const int (&end)[4]) const {
#pragma unroll
    for (int i = 0; i < 8; ++i) s[i] = masked && key0 + key(i) >= end[column_index(i)] ? -INFINITY : s[i];
  }

  // One tile's step: the columns' maxima over the warpgroup; m (running maxima) -> the new ones,
  // alpha = 2^(m_old - m_new), l = alpha l + the thread's P; P = 2^(s - m_new) (a column with no key
  // yet subtracts 0: its P are all 0) stored as T16 (f16 or bf16) to P^T [16 columns][64 keys] at
  // pbuf, 128-byte swizzled (wgmma's K-major B); returns once every thread of the warpgroup has
  // stored its P^T (visible to wgmma) and read red.
  template <class T16>
  __device__ void step(const float (&s)[8], float (&m)[4], float (&l)[4], float (&alpha)[4], uint32_t pbuf) const {
#pragma unroll
    for (int ci = 0; ci < 4; ++ci) {
      const int i = 4 * (ci / 2) + ci % 2;
      float v = fmaxf(s[i], s[i + 2]);
#pragma unroll
      for (int off = 4; off < 32; off *= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
      if (lane < 4) red[warp * kCols + col(ci)] = v;
    }
    hopper::named_sync(barrier, 128);
    float base[4];
#pragma unroll
    for (int ci = 0; ci < 4; ++ci) {
      float v = m[ci];
#pragma unroll
      for (int w = 0; w < 4; ++w) v = fmaxf(v, red[w * kCols + col(ci)]);
      base[ci] = v == -INFINITY ? 0.0f : v;
      alpha[ci] = sm80::ex2(m[ci] - base[ci]);
      m[ci] = v;
      l[ci] *= alpha[ci];
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int ci = column_index(i);
      const float p = sm80::ex2(s[i] - base[ci]);
      l[ci] += p;
      const int n = col(ci), k = key(i);
      T16 h;
      if constexpr (std::is_same_v<T16, __half>) {
        h = __float2half_rn(p);
      } else {
        h = __float2bfloat16_rn(p);
      }
      asm volatile("st.shared.b16 [%0], %1;" ::"r"(pbuf + n * 128 + (((k / 8) ^ (n & 7)) << 4) + (k % 8) * 2),
                   "h"(*reinterpret_cast<const uint16_t*>(&h))
                   : "memory");
    }
    hopper::fence_proxy_async();        // P^T's generic stores, read by wgmma
    hopper::named_sync(barrier, 128);  // every thread's P^T stores (and maxima reads) done
  }

  // The columns' sums over the warpgroup's threads: each warp's into sums[warp * 16 + col] (its 8
  // lanes of a quad position added), then the barrier; the warpgroup's sum of a column is that of
  // its 4 warps' entries.
  __device__ void publish_sums(const float (&l)[4], float* sums) const {
#pragma unroll
    for (int ci = 0; ci < 4; ++ci) {
      float v = l[ci];
#pragma unroll
      for (int off = 4; off < 32; off *= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane < 4) sums[warp * kCols + col(ci)] = v;
    }
    hopper::named_sync(barrier, 128);
  }
  // The warpgroup's sum of column `column` from publish_sums' entries.
  __device__ static float total(const float* sums, int column) {
    return sums[column] + sums[kCols + column] + sums[2 * kCols + column] + sums[3 * kCols + column];
  }
};

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace kbench::kernels::mla_fa3_detail
