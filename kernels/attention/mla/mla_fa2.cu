// kbench's MLA decode kernel "fa2": mma.sync.m16n8k16 (bf16 in, fp32 accumulate), cp.async, sm_80+.
// bfloat16 q and caches, head dims 512 (ckv, = V) / 64 (kpe).
//
// Grid (num_splits, row_blocks, batch), 256 threads (8 warps). A CTA takes kRows = 16 kM query rows
// of one request (row j = token i * num_heads + head h, i.e. the request's rows in memory order; the
// rows of several tokens may share a CTA) and the keys [split * split_keys, ...) of that request, so
// the latent cache is read once per row block (all heads that share the block share every tile).
//
// Shared memory: Q [kRows][576] (q_nope | q_pe, read once), a 2-stage ring of KV tiles [32 keys][576]
// (ckv | kpe, by 16-byte cp.async from the keys' pages: any page size; a key past the range loads
// the range's last key and is masked), rows padded to 1168 bytes so that ldmatrix over 8 rows is
// bank-conflict free; partial S [4][kRows][40] fp32, P [kRows][40] bf16, per-row alpha / l / m,
// and a ring of the tiles' cache-row indices (threads 0..31 fetch tile j + 2's page entries while
// tile j is computed).
//   kM = 1 (16 rows): 105 KB, 2 CTAs per H100 SM; kM = 2 (32 rows): 135 KB, 1 CTA; kM = 4 (64 rows):
//   195 KB, 1 CTA (where a block may not have that much, e.g. an A100, the plan takes 32-row blocks).
// Per 32-key tile:
//  * S = Q K^T over the 576 dims: warp w takes key group g = w / 4 (16 keys: two n8 tiles) and dim
//    quarter kq = w % 4 (144 dims, 9 k-steps) for every m tile; B (K) fragments are loaded once per
//    k-step and reused for the kM m tiles. The four quarters' partial S go to shared memory.
//  * Online softmax by 256 / kRows threads per row (fp32, exp2; masks: the row's causal bound
//    kv_len - s_qo + 1 + i and the split end), P as bf16 to shared memory, the row's rescale
//    factor alpha beside it; every thread of a row keeps the running (m, l).
//  * O += P V: warp w owns output columns [64 w, 64 w + 64) for all kRows rows (32 kM fp32
//    registers per thread); V fragments by ldmatrix.trans from the ckv part of the tile.
// End: o = ckv_scale * O / l as bf16 (one split), or the normalised partial O and the log2-sum-exp
// (fp32, workspace) for the merge kernel (mla_split.cu), which combines a row's splits by their weights.
#include "kernels/attention/mla/mla_fa2.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/attention/mla/mla_fp8.cuh"
#include "kernels/common/kernel_image.hpp"
#include "kernels/common/launch.hpp"
#include "kernels/common/mma_sm80.cuh"
#include "kernels/common/pdl.cuh"

namespace kbench::kernels {
namespace mla_fa2_detail {

constexpr int kDc = 512;                 // latent (ckv) dim = V dim = output dim
constexpr int kDp = 64;                  // rope (kpe) dim
constexpr int kD = kDc + kDp;            // 576: the QK dim
constexpr int kChunks = kD * 2 / 16;     // 72 16-byte chunks per row
constexpr int kRowBytes = kD * 2 + 16;   // padded row: consecutive rows shift by 4 banks
constexpr int kTile = 32;                // keys per tile
constexpr int kThreads = 256;
constexpr int kSPad = 40;                // floats per partial-S row
constexpr int kPPad = 40;                // bf16 per P row (80 bytes: conflict-free ldmatrix)

using Args = MlaKernelArgs;  // q_nope, q_pe: bfloat16, or fp8 e4m3 with fp8 KV; ckv, kpe: the kernel's kFp8Kv
using mla_detail::e4m3x4_to_bf16x4;

template <int kM>
struct Layout {
  static constexpr int kRows = 16 * kM;
  static constexpr int q = 0;
  static constexpr int kv = q + kRows * kRowBytes;
  static constexpr int s = kv + 2 * kTile * kRowBytes;
  static constexpr int p = s + 4 * kRows * kSPad * 4;
  static constexpr int alpha = p + kRows * kPPad * 2;
  static constexpr int l = alpha + kRows * 4;
  static constexpr int m = l + kRows * 4;
  static constexpr int idx = m + kRows * 4;
  static constexpr int bytes = idx + 3 * kTile * 4;
};

template <int kM>
constexpr int kCtasPerSm = kM == 1 ? 2 : 1;

// kFp8Kv: the caches are fp8 e4m3. Warp w loads keys [4 w, 4 w + 4) of a tile, each key's 576 fp8
// bytes (ckv | kpe) into the first 576 bytes of its own padded bf16 row; after the tile's wait every
// thread reads back the chunks it loaded itself, the warp syncs, and it writes them widened to bf16
// over the whole row (only the warp's own rows: no block barrier beyond the existing one). The rest
// of the kernel (S, softmax, P V, epilogue) is the bf16 kernel's: the scales stay in scale_log2 and
// v_scale, kpe is multiplied by kpe_scale / ckv_scale when widened.
template <int kM, bool kFp8Kv>
__global__ void __launch_bounds__(kThreads, kCtasPerSm<kM>) mla_fa2_kernel(const Args a) {
  pdl_launch_dependents();  // the split merge (if any) waits on SMs as this grid's CTAs leave them
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using L = Layout<kM>;
  constexpr int kRows = L::kRows;
  constexpr int kTpr = kThreads / kRows;  // softmax threads per row: 16, 8, 4
  constexpr int kKpt = kTile / kTpr;      // keys per softmax thread: 2, 4, 8
  extern __shared__ __align__(128) uint8_t smem[];
  float* s_part = reinterpret_cast<float*>(smem + L::s);
  __nv_bfloat16* s_p = reinterpret_cast<__nv_bfloat16*>(smem + L::p);
  float* s_alpha = reinterpret_cast<float*>(smem + L::alpha);
  float* s_l = reinterpret_cast<float*>(smem + L::l);
  int32_t* s_idx = reinterpret_cast<int32_t*>(smem + L::idx);
  const uint32_t q_base = sm80::smem_u32(smem + L::q);
  const uint32_t kv_base = sm80::smem_u32(smem + L::kv);
  const uint32_t p_base = sm80::smem_u32(smem + L::p);

  const int split = static_cast<int>(blockIdx.x);
  const int b = static_cast<int>(blockIdx.z);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int j0 = static_cast<int>(blockIdx.y) * kRows;
  const int kv_len = a.kv_len[b];
  const int j_last = min(j0 + kRows, a.rows) - 1;
  const int causal_end = kv_len - a.s_qo + 1 + j_last / a.num_heads;  // the block's last row's bound
  const int k_begin = split * a.split_keys;
  const int k_end = min(min(kv_len, causal_end), k_begin + a.split_keys);
  const int64_t row0 = static_cast<int64_t>(b) * a.rows;  // the request's first row (all of out)
  const int64_t part_row0 = (static_cast<int64_t>(b) * a.num_splits + split) * a.rows;

  if (k_end <= k_begin) {  // an empty split (split 0 never is: every row sees key 0)
    for (int r = tid; r < kRows; r += kThreads) {
      if (j0 + r < a.rows) a.part_lse[part_row0 + j0 + r] = -INFINITY;
    }
    return;
  }
  const int32_t* pages = a.kv_indices + a.kv_indptr[b];
  const int num_tiles = (k_end - k_begin + kTile - 1) / kTile;

  // Cache row of key k_begin + tile * 32 + lane (clamped to the range's last key).
  auto key_row = [&](int tile) {
    const int t = min(k_begin + tile * kTile + lane, k_end - 1);
    return __ldg(pages + t / a.page_size) * a.page_size + t % a.page_size;
  };
  static_assert(kTile == 4 * (kThreads / 32), "fp8 KV: four keys per warp");
  auto load_tile = [&](int stage, int slot) {
    const uint32_t dst0 = kv_base + stage * kTile * kRowBytes;
    if constexpr (kFp8Kv) {
      const uint8_t* ckv8 = static_cast<const uint8_t*>(a.ckv);
      const uint8_t* kpe8 = static_cast<const uint8_t*>(a.kpe);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {  // ckv: lane's 16-byte chunk of each of the warp's keys
        const int key = warp * 4 + kk;
        const int64_t row = s_idx[slot * kTile + key];
        sm80::cp_async16(dst0 + key * kRowBytes + lane * 16, ckv8 + row * kDc + lane * 16);
      }
      if (lane < 16) {  // kpe: 4 chunks a key
        const int key = warp * 4 + (lane >> 2);
        const int64_t row = s_idx[slot * kTile + key];
        sm80::cp_async16(dst0 + key * kRowBytes + kDc + (lane & 3) * 16, kpe8 + row * kDp + (lane & 3) * 16);
      }
    } else {
      const __nv_bfloat16* ckv = static_cast<const __nv_bfloat16*>(a.ckv);
      const __nv_bfloat16* kpe = static_cast<const __nv_bfloat16*>(a.kpe);
#pragma unroll 3
      for (int it = 0; it < kTile * kChunks / kThreads; ++it) {
        const int c = tid + it * kThreads;
        const int key = c / kChunks, ch = c % kChunks;
        const int64_t row = s_idx[slot * kTile + key];
        const void* src = ch < kDc / 8 ? static_cast<const void*>(ckv + row * kDc + ch * 8)
                                       : static_cast<const void*>(kpe + row * kDp + (ch - kDc / 8) * 8);
        sm80::cp_async16(dst0 + key * kRowBytes + ch * 16, src);
      }
    }
  };
  // fp8 KV: widen the warp's four keys of stage `stage` in place (after the thread's cp.async wait).
  auto widen_tile = [&](int stage) {
    uint8_t* t = smem + L::kv + stage * kTile * kRowBytes;
    uint4 c[4], e = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) c[kk] = *reinterpret_cast<const uint4*>(t + (warp * 4 + kk) * kRowBytes + lane * 16);
    const int ekey = warp * 4 + (lane >> 2);
    if (lane < 16) e = *reinterpret_cast<const uint4*>(t + ekey * kRowBytes + kDc + (lane & 3) * 16);
    __syncwarp();  // every lane's fp8 bytes are in registers before any row is overwritten
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      uint8_t* dst = t + (warp * 4 + kk) * kRowBytes + lane * 32;  // columns [16 lane, 16 lane + 16)
      const uint2 w0 = e4m3x4_to_bf16x4(c[kk].x, 1.0f), w1 = e4m3x4_to_bf16x4(c[kk].y, 1.0f);
      const uint2 w2 = e4m3x4_to_bf16x4(c[kk].z, 1.0f), w3 = e4m3x4_to_bf16x4(c[kk].w, 1.0f);
      *reinterpret_cast<uint4*>(dst) = make_uint4(w0.x, w0.y, w1.x, w1.y);
      *reinterpret_cast<uint4*>(dst + 16) = make_uint4(w2.x, w2.y, w3.x, w3.y);
    }
    if (lane < 16) {
      uint8_t* dst = t + ekey * kRowBytes + kDc * 2 + (lane & 3) * 32;  // kpe columns [512 + 16 (lane & 3), ...)
      const uint2 w0 = e4m3x4_to_bf16x4(e.x, a.kpe_mul), w1 = e4m3x4_to_bf16x4(e.y, a.kpe_mul);
      const uint2 w2 = e4m3x4_to_bf16x4(e.z, a.kpe_mul), w3 = e4m3x4_to_bf16x4(e.w, a.kpe_mul);
      *reinterpret_cast<uint4*>(dst) = make_uint4(w0.x, w0.y, w1.x, w1.y);
      *reinterpret_cast<uint4*>(dst + 16) = make_uint4(w2.x, w2.y, w3.x, w3.y);
    }
  };

  // Q rows (zeros past the request's rows) and the first two tiles' cache rows. fp8 q (fp8 KV
  // only) is widened to bf16 exactly by plain loads (q_scale stays in scale_log2).
  if (kFp8Kv && a.q_fp8) {
    const uint8_t* q_nope8 = static_cast<const uint8_t*>(a.q_nope);
    const uint8_t* q_pe8 = static_cast<const uint8_t*>(a.q_pe);
    for (int c = tid; c < kRows * kChunks; c += kThreads) {
      const int r = c / kChunks, ch = c % kChunks;
      uint4 v = make_uint4(0u, 0u, 0u, 0u);
      if (j0 + r < a.rows) {
        const int64_t qrow = row0 + j0 + r;
        const uint2 f = __ldg(reinterpret_cast<const uint2*>(
            ch < kDc / 8 ? q_nope8 + qrow * kDc + ch * 8 : q_pe8 + qrow * kDp + (ch - kDc / 8) * 8));
        const uint2 lo = e4m3x4_to_bf16x4(f.x, 1.0f), hi = e4m3x4_to_bf16x4(f.y, 1.0f);
        v = make_uint4(lo.x, lo.y, hi.x, hi.y);
      }
      *reinterpret_cast<uint4*>(smem + L::q + r * kRowBytes + ch * 16) = v;
    }
  } else {
    const __nv_bfloat16* q_nope = static_cast<const __nv_bfloat16*>(a.q_nope);
    const __nv_bfloat16* q_pe = static_cast<const __nv_bfloat16*>(a.q_pe);
    for (int c = tid; c < kRows * kChunks; c += kThreads) {
      const int r = c / kChunks, ch = c % kChunks;
      const uint32_t dst = q_base + r * kRowBytes + ch * 16;
      if (j0 + r < a.rows) {
        const int64_t qrow = row0 + j0 + r;
        const void* src = ch < kDc / 8 ? static_cast<const void*>(q_nope + qrow * kDc + ch * 8)
                                       : static_cast<const void*>(q_pe + qrow * kDp + (ch - kDc / 8) * 8);
        sm80::cp_async16(dst, src);
      } else {
        asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(dst), "r"(0) : "memory");
      }
    }
  }
  if (warp == 0) {
    s_idx[lane] = key_row(0);
    if (num_tiles > 1) s_idx[kTile + lane] = key_row(1);
  }
  __syncthreads();
  load_tile(0, 0);
  sm80::cp_async_commit();

  // Softmax state of row `sr` (threads kTpr * sr .. + kTpr - 1).
  const int sr = tid / kTpr;
  const int ssub = tid % kTpr;
  const int sj = j0 + sr;
  const int row_visible = sj < a.rows ? kv_len - a.s_qo + 1 + sj / a.num_heads : 0;
  const int row_end = min(row_visible, k_end);
  float m_run = -INFINITY, l_run = 0.0f;

  // S warp roles and the O accumulators.
  const int kq = warp & 3;
  const int kg = warp >> 2;
  float o[kM][8][4];
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[m][n][e] = 0.0f;

  for (int tile = 0; tile < num_tiles; ++tile) {
    const int stage = tile & 1;
    int next_row = 0;
    if (warp == 0 && tile + 2 < num_tiles) next_row = key_row(tile + 2);  // in flight during the math
    if (tile + 1 < num_tiles) load_tile(stage ^ 1, (tile + 1) % 3);
    sm80::cp_async_commit();
    sm80::cp_async_wait<1>();
    if constexpr (kFp8Kv) widen_tile(stage);  // the warp's own keys: its own cp.async bytes, then __syncwarp
    __syncthreads();  // tile `tile` (and Q) in shared memory, as bf16

    // ---- S partials: rows of every m tile x keys [16 kg, 16 kg + 16) x dims [144 kq, 144 kq + 144)
    {
      const uint32_t k_tile = kv_base + stage * kTile * kRowBytes;
      float acc[kM][2][4];
#pragma unroll
      for (int m = 0; m < kM; ++m)
#pragma unroll
        for (int n = 0; n < 2; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[m][n][e] = 0.0f;
      const uint32_t b_addr =
          k_tile + (kg * 16 + (lane & 7) + 8 * (lane >> 4)) * kRowBytes + (8 * ((lane >> 3) & 1)) * 2;
      const uint32_t a_addr = q_base + ((lane & 7) + 8 * ((lane >> 3) & 1)) * kRowBytes + (8 * (lane >> 4)) * 2;
#pragma unroll
      for (int ks = 0; ks < 9; ++ks) {
        const int kdim = kq * 144 + ks * 16;
        uint32_t bf[4];
        sm80::ldsm_x4(b_addr + kdim * 2, bf);
#pragma unroll
        for (int m = 0; m < kM; ++m) {
          uint32_t af[4];
          sm80::ldsm_x4(a_addr + m * 16 * kRowBytes + kdim * 2, af);
          sm80::mma16816<false>(acc[m][0], af, bf[0], bf[1]);
          sm80::mma16816<false>(acc[m][1], af, bf[2], bf[3]);
        }
      }
      float* part = s_part + kq * kRows * kSPad;
#pragma unroll
      for (int m = 0; m < kM; ++m)
#pragma unroll
        for (int n = 0; n < 2; ++n) {
          const int r = m * 16 + (lane >> 2);
          const int col = kg * 16 + n * 8 + 2 * (lane & 3);
          *reinterpret_cast<float2*>(part + r * kSPad + col) = make_float2(acc[m][n][0], acc[m][n][1]);
          *reinterpret_cast<float2*>(part + (r + 8) * kSPad + col) = make_float2(acc[m][n][2], acc[m][n][3]);
        }
    }
    __syncthreads();

    // ---- online softmax of row sr, keys [kKpt ssub, kKpt ssub + kKpt) of the tile
    {
      float s[kKpt];
      float mx = -INFINITY;
      const int key0 = k_begin + tile * kTile + ssub * kKpt;
#pragma unroll
      for (int k = 0; k < kKpt; ++k) {
        const int off = sr * kSPad + ssub * kKpt + k;
        const float v = (s_part[off] + s_part[kRows * kSPad + off]) +
                        (s_part[2 * kRows * kSPad + off] + s_part[3 * kRows * kSPad + off]);
        s[k] = key0 + k < row_end ? v * a.scale_log2 : -INFINITY;
        mx = fmaxf(mx, s[k]);
      }
#pragma unroll
      for (int off = kTpr / 2; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m_run, mx);
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;
      const float alpha = sm80::ex2(m_run - m_use);
      float sum = 0.0f;
#pragma unroll
      for (int k = 0; k < kKpt; k += 2) {
        const float p0 = sm80::ex2(s[k] - m_use), p1 = sm80::ex2(s[k + 1] - m_use);
        sum += p0 + p1;
        *reinterpret_cast<uint32_t*>(s_p + sr * kPPad + ssub * kKpt + k) = sm80::pack2<false>(p0, p1);
      }
#pragma unroll
      for (int off = kTpr / 2; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
      l_run = l_run * alpha + sum;
      m_run = m_new;
      if (ssub == 0) s_alpha[sr] = alpha;
    }
    __syncthreads();

    // ---- O = alpha O + P V over output columns [64 warp, 64 warp + 64)
    {
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        const float a0 = s_alpha[m * 16 + (lane >> 2)], a1 = s_alpha[m * 16 + (lane >> 2) + 8];
#pragma unroll
        for (int n = 0; n < 8; ++n) {
          o[m][n][0] *= a0;
          o[m][n][1] *= a0;
          o[m][n][2] *= a1;
          o[m][n][3] *= a1;
        }
      }
      const uint32_t v_tile = kv_base + stage * kTile * kRowBytes;
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) {
        uint32_t pf[kM][4];
#pragma unroll
        for (int m = 0; m < kM; ++m) {
          const int r = m * 16 + (lane & 7) + 8 * ((lane >> 3) & 1);
          sm80::ldsm_x4(p_base + (r * kPPad + kk * 16 + 8 * (lane >> 4)) * 2, pf[m]);
        }
        const int key = kk * 16 + (lane & 7) + 8 * ((lane >> 3) & 1);
#pragma unroll
        for (int np = 0; np < 4; ++np) {
          uint32_t vf[4];
          sm80::ldsm_x4_trans(v_tile + key * kRowBytes + (warp * 64 + np * 16 + 8 * (lane >> 4)) * 2, vf);
#pragma unroll
          for (int m = 0; m < kM; ++m) {
            sm80::mma16816<false>(o[m][2 * np], pf[m], vf[0], vf[1]);
            sm80::mma16816<false>(o[m][2 * np + 1], pf[m], vf[2], vf[3]);
          }
        }
      }
    }
    if (warp == 0 && tile + 2 < num_tiles) s_idx[((tile + 2) % 3) * kTile + lane] = next_row;
    __syncthreads();  // the stage and the P / alpha buffers are free again
  }

  // ---- epilogue
  if (ssub == 0) s_l[sr] = l_run;
  if (a.num_splits > 1 && ssub == 0 && sj < a.rows) {
    a.part_lse[part_row0 + sj] = l_run > 0.0f ? m_run + __log2f(l_run) : -INFINITY;
  }
  __syncthreads();
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = m * 16 + (lane >> 2) + 8 * half;
      const int j = j0 + r;
      if (j >= a.rows) continue;
      const float l = s_l[r];
      const float inv = l > 0.0f ? a.v_scale / l : 0.0f;
      const int col0 = warp * 64 + 2 * (lane & 3);
      if (a.num_splits == 1) {
        __nv_bfloat16* dst = a.out + (row0 + j) * kDc + col0;
#pragma unroll
        for (int n = 0; n < 8; ++n) {
          *reinterpret_cast<uint32_t*>(dst + n * 8) =
              sm80::pack2<false>(o[m][n][2 * half] * inv, o[m][n][2 * half + 1] * inv);
        }
      } else {
        float* dst = a.part_o + (part_row0 + j) * kDc + col0;
#pragma unroll
        for (int n = 0; n < 8; ++n) {
          *reinterpret_cast<float2*>(dst + n * 8) = make_float2(o[m][n][2 * half] * inv, o[m][n][2 * half + 1] * inv);
        }
      }
    }
#endif
}

template <int kM, bool kFp8Kv>
cudaError_t launch_rows(const Args& args, int row_blocks, int batch, cudaStream_t stream) {
  const cudaError_t status = ensure_smem_limit<mla_fa2_kernel<kM, kFp8Kv>>(Layout<kM>::bytes);
  if (status != cudaSuccess) return status;
  const dim3 grid(static_cast<unsigned>(args.num_splits), static_cast<unsigned>(row_blocks),
                  static_cast<unsigned>(batch));
  return launch_kernel(mla_fa2_kernel<kM, kFp8Kv>, grid, dim3(kThreads), Layout<kM>::bytes, stream, false, args);
}

}  // namespace mla_fa2_detail

namespace {
using namespace mla_fa2_detail;

int rows_per_cta(int rows) { return rows <= 16 ? 16 : rows <= 32 ? 32 : 64; }

// The current device's opt-in shared memory per block (bytes); an H100's where the query fails.
int max_smem_per_block() {
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 227 * 1024;
  }
  return bytes;
}
}  // namespace

bool mla_fa2_dtypes_supported(DType q, DType kv) { return mla_kernel_dtypes_supported(q, kv); }

bool mla_fa2_supported(const MlaParams& p) { return mla_kernel_supported(p); }

cudaError_t mla_fa2_available() {
  cudaFuncAttributes attributes{};
  return kernel_image_status(cudaFuncGetAttributes(&attributes, mla_fa2_kernel<1, false>));
}

MlaPlan plan_mla_fa2(const MlaParams& p, std::span<const int32_t> kv_lens, int sm_count) {
  const int max_kv_len = kv_lens.empty() ? 1 : *std::max_element(kv_lens.begin(), kv_lens.end());
  int rows = rows_per_cta(p.s_qo * p.num_heads);
  // 64-row blocks need 192 KB of shared memory: 32-row blocks where a block may not have it (A100).
  if (rows == 64 && max_smem_per_block() < Layout<4>::bytes) rows = 32;
  return plan_mla_split(p, rows, rows == 16 ? kCtasPerSm<1> : kCtasPerSm<4>, kTile, max_kv_len, sm_count);
}

cudaError_t launch_mla_fa2(const MlaParams& p, const MlaPlan& plan, void* out, void* workspace,
                           cudaStream_t stream) {
  if (!mla_fa2_supported(p) || plan.num_splits < 1 || plan.split_keys < kTile || plan.split_keys % kTile != 0 ||
      (plan.rows_per_cta != 16 && plan.rows_per_cta != 32 && plan.rows_per_cta != 64) || plan.balanced()) {
    return cudaErrorInvalidValue;
  }
  if (p.batch == 0) return cudaSuccess;
  Args a{};
  if (const cudaError_t status = make_mla_kernel_args(p, plan, out, workspace, &a); status != cudaSuccess) return status;
  const bool fp8_kv = a.kv_fp8 != 0;
  const int row_blocks = (a.rows + plan.rows_per_cta - 1) / plan.rows_per_cta;
  cudaError_t status = cudaSuccess;
  switch (plan.rows_per_cta) {
    case 16: status = fp8_kv ? launch_rows<1, true>(a, row_blocks, p.batch, stream)
                             : launch_rows<1, false>(a, row_blocks, p.batch, stream); break;
    case 32: status = fp8_kv ? launch_rows<2, true>(a, row_blocks, p.batch, stream)
                             : launch_rows<2, false>(a, row_blocks, p.batch, stream); break;
    default: status = fp8_kv ? launch_rows<4, true>(a, row_blocks, p.batch, stream)
                             : launch_rows<4, false>(a, row_blocks, p.batch, stream); break;
  }
  if (status != cudaSuccess || plan.num_splits == 1) return status;
  return launch_mla_merge(p, plan, workspace, out, stream);
}

}  // namespace kbench::kernels
