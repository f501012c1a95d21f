// kbench's CUDA-core decode kernel ("fa2"): device code and the launch helper, instantiated once
// per kv-cache dtype by decode_fa2_<dtype>.cu. Private to kernels/attention/decode.
//
// One CTA (4 warps) runs one work item (request, kv head, token range) for up to kHeads (1, 2, 4
// or 8) of the kv head's query heads; a group of more than 8 query heads (or a group that is not a
// power of two, rounded up: 5 -> 8 with 3 idle heads) takes ceil(group / kHeads) adjacent CTAs,
// which read the same K/V (the second read mostly hits L2).
//
// Warps are independent streams: warp w takes the item's stage-sized token chunks w, w+4, w+8, ...
// and keeps its own online-softmax state; the 4 warps are merged once, at the end, through shared
// memory. No block barrier in the main loop.
//
// Loads: each warp owns a ring of kStages stages (16 KB per warp, 64 KB + 2 KB scratch per CTA).
// A stage is kStageTokens tokens of K and V (4 KB for 16-bit caches; kStageTokens = 16 for
// head_dim 64, 8 for 128, 4 for 256; fp8: 16, 16, 8) copied with 16-byte cp.async (zero-filled
// past the end of the range): a token's K and V rows are split between kLanesPerTok (2..8) lanes,
// each taking 16-byte chunks i, i + kLanesPerTok, ... so every instruction reads >= 32 contiguous
// bytes of each row. A lane always copies the same token of the stage, so it looks up one page
// per stage; (page, slot) advance incrementally (no division in the loop) and the next stage's
// page index is loaded one stage ahead of its use. kStages - 1 stages (12 KB per warp, 96 KB per
// SM at 2 CTAs) are in flight while one is computed: ~3.5x what Little's law asks for at 3 TB/s.
//
// Compute, per sub-step (2 tokens per lane group): a row of head_dim elements is spread over
// kLanesPerRow = head_dim / 8 lanes (a "lane group"; 32 / kLanesPerRow lane groups per warp work
// on different tokens), 8 elements per lane. A lane holds q (pre-scaled by
// sm_scale * q_scale * k_scale * log2 e) for all kHeads heads of its 8 dimensions, so every K/V
// element is loaded from shared memory and converted to fp32 once and feeds kHeads FMAs. The
// 2 * kHeads partial dot products of a lane are then reduced over the lane group with a
// reduce-scatter: at step s, lane bit s decides which half of the values a lane keeps; lanes hold
// their q heads and K tokens in a lane-dependent (XOR-permuted) order so that the kept half is
// always the first half of the registers, which makes every step one shuffle + one add per kept
// value (~2 instructions per K element at 8 heads, instead of log2(lanes) shuffles per value).
// After it, each lane owns 1 (or 2) full logits. Max per head over the sub-step's tokens (2-3
// shuffles), online-softmax update (o and l are rescaled only when some running max grows: a
// warp vote; rare after the first tokens), p = 2^(s - m) on the SFU, and the p of the sub-step
// broadcast through a double-buffered shared-memory slot (one __syncwarp). PV: every lane updates
// o[h][its 8 dims] for all heads from the V rows of its lane group's tokens.
//
// The sub-step loop is unrolled by 2, so the compiler overlaps one sub-step's reduction / softmax
// latency chain with the other's FMAs (measured in the SASS: same instruction count as unroll 1).
//
// Registers (sm_90a, CUDA 13.0, no spills): 8 heads per CTA 213..226 (q and o alone are 128), so
// 2 CTAs = 8 warps per SM (__launch_bounds__(128, 2)); 4 heads 128..140 (3 CTAs per SM: 3 x 66 KB
// shared memory also fits); 1-2 heads 71..96. Loop (bf16, head_dim 128, 8 heads), per lane and
// 8-token stage: 8 LDGSTS.128, 4 LDS.128 of K/V, 512 FFMA/FMUL, 64 conversions, 34 SHFL, ~810
// instructions in all outside the (rare) rescale branch: ~12.7 per K/V element. At 3 TB/s of bf16
// the FP32 pipes would allow ~20 per element, so the kernel can be memory-bound at 8 warps per SM
// if the two warps of a scheduler keep it ~65% busy; fp8 caches halve the bytes but not the
// instructions (~13.5 per element), so there it is instruction-bound (expect ~0.8x the bf16 time,
// not 0.5x: use fa2_tc for fp8 GQA).
//
// Epilogue: per-warp o (per lane group), running max and sum go to shared memory (the ring, now
// free); each thread combines 8 output dims of one head over warps and lane groups, then writes
// the final output (converted; fp8: / out_scale, saturated) or, for a split item, the partial
// o = v_scale * sum(p V) / sum(p) (fp32) and lse = ln(sum(exp(s))) (natural log of the scaled
// logits s) into the workspace slot.
#pragma once


#include "kernels/attention/decode/decode_common.cuh"
#include "kernels/common/launch.hpp"

namespace kbench::kernels::decode_detail::fa2 {

[[nodiscard]] constexpr int ilog2(int v) { return v <= 1 ? 0 : 1 + ilog2(v / 2); }

template <int kHeadDim, int kHeads, int kKv>
struct Fa2Config {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kElemBytes = elem_bytes(kKv);
  static constexpr int kRowBytes = kHeadDim * kElemBytes;
  static constexpr int kLanesPerRow = kHeadDim / 8;  // 8 elements per lane
  static constexpr int kLaneGroups = 32 / kLanesPerRow;
  static constexpr int kTokPerGroup = 2;  // tokens per lane group per sub-step
  static constexpr int kSubTokens = kLaneGroups * kTokPerGroup;
  static constexpr int kStageTokens = 2048 / kRowBytes < 16 ? 2048 / kRowBytes : 16;
  static constexpr int kSubSteps = kStageTokens / kSubTokens;
  static constexpr int kStageBytes = 2 * kStageTokens * kRowBytes;
  static constexpr int kStages = 16384 / kStageBytes;
  static constexpr int kLanesPerTok = 32 / kStageTokens;
  static constexpr int kChunksPerLane = kRowBytes / 16 / kLanesPerTok;  // per row (K, then V)
  static constexpr int kV = kTokPerGroup * kHeads;  // partial logits per lane per sub-step
  static constexpr int kLogV = ilog2(kV);
  static constexpr int kLogN = ilog2(kLanesPerRow);
  static constexpr int kLogHeads = ilog2(kHeads);
  static constexpr int kScatter = kLogV < kLogN ? kLogV : kLogN;  // reduce-scatter steps
  static constexpr int kHeld = kV >> kScatter;                    // logits a lane owns afterwards
  static constexpr int kRingBytes = kStages * kStageBytes;        // per warp
  static constexpr int kPbufFloats = 2 * kLaneGroups * kV;        // per warp, double-buffered p
  static constexpr int kScratchFloats = (kPbufFloats + kHeads + 3) / 4 * 4;  // + rescale factors
  static constexpr int kSmemBytes = kWarps * (kRingBytes + kScratchFloats * 4);
  // Epilogue scratch in the (drained) rings: o [warp][lane group][head][dim], m and l [warp][head].
  static constexpr int kEpilogueFloats = kWarps * kLaneGroups * kHeads * kHeadDim + 2 * kWarps * kHeads;

  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256);
  static_assert(kHeads == 1 || kHeads == 2 || kHeads == 4 || kHeads == 8);
  static_assert(kSubSteps >= 1 && kSubSteps * kSubTokens == kStageTokens);
  static_assert(kLanesPerTok >= 2 && kChunksPerLane >= 1 && kChunksPerLane * kLanesPerTok * 16 == kRowBytes);
  static_assert(kStages >= 3 && kStages * kStageBytes == 16384);
  static_assert(kEpilogueFloats * 4 <= kWarps * kRingBytes);
  static_assert(kScatter >= 1);
};

// 8 cache elements (16 or 8 bytes) from shared memory, as float.
template <int kKv>
__device__ __forceinline__ void load_smem8(const unsigned char* p, float (&f)[8]) {
  uint32_t w[4];
  if constexpr (elem_bytes(kKv) == 2) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    w[0] = v.x;
    w[1] = v.y;
    w[2] = v.z;
    w[3] = v.w;
  } else {
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    w[0] = v.x;
    w[1] = v.y;
    w[2] = 0u;
    w[3] = 0u;
  }
  unpack8<kKv>(w, f);
}

// kN floats from shared memory (16-byte aligned for kN >= 4).
template <int kN>
__device__ __forceinline__ void load_smem_floats(const float* p, float (&f)[kN]) {
  if constexpr (kN % 4 == 0) {
#pragma unroll
    for (int i = 0; i < kN; i += 4) {
      const float4 v = *reinterpret_cast<const float4*>(p + i);
      f[i] = v.x;
      f[i + 1] = v.y;
      f[i + 2] = v.z;
      f[i + 3] = v.w;
    }
  } else if constexpr (kN == 2) {
    const float2 v = *reinterpret_cast<const float2*>(p);
    f[0] = v.x;
    f[1] = v.y;
  } else {
    f[0] = p[0];
  }
}

// Reduce-scatter step kS..kSteps-1 over lane bits kS..: the lane keeps values [0, half) and adds
// its partner's values [half, 2 half), which hold the same logical indices (see the header).
template <int kV, int kS, int kSteps>
__device__ __forceinline__ void reduce_scatter(float (&acc)[kV]) {
  if constexpr (kS < kSteps) {
    constexpr int kHalf = kV >> (kS + 1);
#pragma unroll
    for (int p = 0; p < kHalf; ++p) acc[p] += __shfl_xor_sync(0xffffffffu, acc[p + kHalf], 1 << kS);
    reduce_scatter<kV, kS + 1, kSteps>(acc);
  }
}

template <int kHeadDim, int kHeads, int kKv>
__global__ void __launch_bounds__(Fa2Config<kHeadDim, kHeads, kKv>::kThreads, 2)
    fa2_decode_kernel(const Fa2Args a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // cp.async and bf16 conversions need sm_80: the routine never launches this here
#else
  using C = Fa2Config<kHeadDim, kHeads, kKv>;
  constexpr int kN = C::kLanesPerRow;
  constexpr int kLG = C::kLaneGroups;
  constexpr int kS = C::kStageTokens;
  constexpr int kV = C::kV;
  constexpr int kHeld = C::kHeld;
  constexpr unsigned kFull = 0xffffffffu;
  extern __shared__ __align__(16) unsigned char smem[];

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int lg = lane / kN;  // lane group: which tokens of a sub-step
  const int j = lane % kN;   // dims [8j, 8j + 8) of a row
  const int item_index = static_cast<int>(blockIdx.x) / a.tiles;
  const int tile = static_cast<int>(blockIdx.x) - item_index * a.tiles;

  // Lane-dependent register order (reduce-scatter): the value in register position p of the
  // partial logits stands for logical index p ^ gbits, logical = t * kHeads + h.
  int gbits = 0;
#pragma unroll
  for (int s = 0; s < C::kScatter; ++s) gbits |= ((j >> s) & 1) << (C::kLogV - 1 - s);
  const int gt = j & 1;                  // token bit (the top logical bit, split first)
  const int gh = gbits & (kHeads - 1);  // head bits

  pdl_wait();

  const DecodeWorkItem item = a.items[item_index];
  const int req = item.request;
  const int kvh = item.kv_head;
  const int tb = item.token_begin;
  const int te = item.token_end;

  // q of this lane's 8 dims for all heads of the tile, register slot h holding head h ^ gh.
  float q[kHeads][8];
  {
    const int64_t q_elem = elem_bytes(a.q_dtype);
    const char* q_base = static_cast<const char*>(a.q);
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      const int hl = tile * kHeads + (h ^ gh);
      if (hl < a.group) {
        const int64_t row = static_cast<int64_t>(req) * a.num_qo_heads + static_cast<int64_t>(kvh) * a.group + hl;
        load8_global(q_base + (row * kHeadDim + j * 8) * q_elem, a.q_dtype, q[h]);
#pragma unroll
        for (int d = 0; d < 8; ++d) q[h][d] *= a.qk_scale_log2;
      } else {
#pragma unroll
        for (int d = 0; d < 8; ++d) q[h][d] = 0.0f;
      }
    }
  }

  // Copy state: this lane copies token u of every stage, chunks ci, ci + kLanesPerTok, ...
  const int u = lane / C::kLanesPerTok;
  const int ci = lane % C::kLanesPerTok;
  const int ps = a.page_size;
  const int n_chunks = (te - tb + kS - 1) / kS;
  const int my_chunks = warp < n_chunks ? (n_chunks - 1 - warp) / C::kWarps + 1 : 0;
  constexpr int kStep = C::kWarps * kS;  // tokens between a warp's consecutive chunks
  const int step_pages = kStep / ps;
  const int step_slots = kStep - step_pages * ps;
  int tok = tb + warp * kS + u;
  int pg = tok / ps;
  int sl = tok - pg * ps;
  const int32_t* page_table = a.indices + (my_chunks > 0 ? ldg_i32(a.indptr + req) : 0);
  int page = (my_chunks > 0 && tok < te) ? ldg_i32(page_table + pg) : 0;
  const char* src_head = a.kv + static_cast<int64_t>(kvh) * a.head_bytes + ci * 16;
  unsigned char* ring = smem + warp * C::kRingBytes;
  const uint32_t dst_lane = smem_addr(ring) + static_cast<uint32_t>(u * C::kRowBytes + ci * 16);

  auto issue = [&](int stage_slot) {
    const bool valid = tok < te;
    const char* src_k = src_head + static_cast<int64_t>(page) * a.page_bytes + static_cast<int64_t>(sl) * a.slot_bytes;
    const char* src_v = src_k + a.v_offset;
    const uint32_t dst = dst_lane + static_cast<uint32_t>(stage_slot * C::kStageBytes);
#pragma unroll
    for (int r = 0; r < C::kChunksPerLane; ++r) {
      cp_async16(dst + r * C::kLanesPerTok * 16, src_k + r * C::kLanesPerTok * 16, valid);
    }
#pragma unroll
    for (int r = 0; r < C::kChunksPerLane; ++r) {
      cp_async16(dst + kS * C::kRowBytes + r * C::kLanesPerTok * 16, src_v + r * C::kLanesPerTok * 16, valid);
    }
    tok += kStep;
    pg += step_pages;
    sl += step_slots;
    if (sl >= ps) {
      sl -= ps;
      ++pg;
    }
    page = tok < te ? ldg_i32(page_table + pg) : 0;  // one stage ahead of its use
  };

#pragma unroll 1
  for (int s = 0; s < C::kStages - 1; ++s) {
    if (s < my_chunks) issue(s);
    cp_async_commit();
  }

  float o[kHeads][8];
#pragma unroll
  for (int h = 0; h < kHeads; ++h) {
#pragma unroll
    for (int d = 0; d < 8; ++d) o[h][d] = 0.0f;
  }
  float m[kHeld];  // running max (base-2 logits) of the heads this lane owns; equal across owners
  float l[kHeld];  // this lane's share of the running sum of p
#pragma unroll
  for (int r = 0; r < kHeld; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
  }
  float* pbuf = reinterpret_cast<float*>(smem + C::kWarps * C::kRingBytes) + warp * C::kScratchFloats;
  float* alpha_s = pbuf + C::kPbufFloats;
  int parity = 0;
  int read_slot = 0;
  int write_slot = C::kStages - 1;

#pragma unroll 1
  for (int k = 0; k < my_chunks; ++k) {
    cp_async_wait<C::kStages - 2>();
    __syncwarp();  // every lane's copies of stage k landed; every lane is done with stage k - 1
    if (k + C::kStages - 1 < my_chunks) issue(write_slot);
    cp_async_commit();

    const unsigned char* krows = ring + read_slot * C::kStageBytes + j * 8 * C::kElemBytes;
    const unsigned char* vrows = krows + kS * C::kRowBytes;
    const int nvalid = min(kS, te - (tb + (warp + k * C::kWarps) * kS));

#pragma unroll 2
    for (int sub = 0; sub < C::kSubSteps; ++sub) {
      const int tok0 = sub * C::kSubTokens + lg * C::kTokPerGroup;  // first token of the lane group

      // QK: partial dot products over this lane's 8 dims, position t * kHeads + h.
      float acc[kV];
#pragma unroll
      for (int t = 0; t < C::kTokPerGroup; ++t) {
        float kf[8];
        load_smem8<kKv>(krows + (tok0 + (t ^ gt)) * C::kRowBytes, kf);
#pragma unroll
        for (int h = 0; h < kHeads; ++h) {
          float x = q[h][0] * kf[0];
#pragma unroll
          for (int d = 1; d < 8; ++d) x = fmaf(q[h][d], kf[d], x);
          acc[t * kHeads + h] = x;
        }
      }
      reduce_scatter<kV, 0, C::kScatter>(acc);
#pragma unroll
      for (int s = C::kScatter; s < C::kLogN; ++s) acc[0] += __shfl_xor_sync(kFull, acc[0], 1 << s);

      // Online softmax on the owned logits: logical index gbits | r.
      float sv[kHeld];
      float mx[kHeld];
#pragma unroll
      for (int r = 0; r < kHeld; ++r) {
        const int t = (gbits | r) >> C::kLogHeads;
        sv[r] = tok0 + t < nvalid ? acc[r] : -INFINITY;
        mx[r] = fmaxf(sv[r], __shfl_xor_sync(kFull, sv[r], 1));  // the other token
      }
#pragma unroll
      for (int mask = kN; mask < 32; mask <<= 1) {  // the other lane groups
#pragma unroll
        for (int r = 0; r < kHeld; ++r) mx[r] = fmaxf(mx[r], __shfl_xor_sync(kFull, mx[r], mask));
      }
      bool grow = false;
#pragma unroll
      for (int r = 0; r < kHeld; ++r) {
        const float mn = fmaxf(m[r], mx[r]);
        grow |= mn > m[r];
        mx[r] = mn;
      }
      if (__any_sync(kFull, grow)) {
#pragma unroll
        for (int r = 0; r < kHeld; ++r) {
          const float alpha = mx[r] == -INFINITY ? 1.0f : fast_exp2(m[r] - mx[r]);
          l[r] *= alpha;
          m[r] = mx[r];
          alpha_s[(gbits | r) & (kHeads - 1)] = alpha;
        }
        __syncwarp();
        float al[kHeads];
        load_smem_floats<kHeads>(alpha_s, al);
#pragma unroll
        for (int h = 0; h < kHeads; ++h) {
#pragma unroll
          for (int d = 0; d < 8; ++d) o[h][d] *= al[h];
        }
      }
      float* pb = pbuf + parity * (kLG * kV) + lg * kV;
#pragma unroll
      for (int r = 0; r < kHeld; ++r) {
        const float p = fast_exp2(sv[r] - (m[r] == -INFINITY ? 0.0f : m[r]));
        l[r] += p;
        pb[gbits | r] = p;
      }
      __syncwarp();

      // PV.
#pragma unroll
      for (int t = 0; t < C::kTokPerGroup; ++t) {
        float pr[kHeads];
        load_smem_floats<kHeads>(pb + t * kHeads, pr);
        float vf[8];
        load_smem8<kKv>(vrows + (tok0 + t) * C::kRowBytes, vf);
#pragma unroll
        for (int h = 0; h < kHeads; ++h) {
#pragma unroll
          for (int d = 0; d < 8; ++d) o[h][d] = fmaf(pr[h], vf[d], o[h][d]);
        }
      }
      parity ^= 1;
    }
    read_slot = read_slot + 1 == C::kStages ? 0 : read_slot + 1;
    write_slot = write_slot + 1 == C::kStages ? 0 : write_slot + 1;
  }

  // ---------------------------------------------------------------------------------------------
  // Epilogue: merge lane groups and warps, normalise, write.
  // ---------------------------------------------------------------------------------------------
  cp_async_wait<0>();
  pdl_launch_dependents();
  __syncthreads();  // every warp is done with its ring
  float* obuf = reinterpret_cast<float*>(smem);
  float* mbuf = obuf + C::kWarps * kLG * kHeads * kHeadDim;
  float* lbuf = mbuf + C::kWarps * kHeads;
  {
    float* dst = obuf + ((warp * kLG + lg) * kHeads) * kHeadDim + j * 8;
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      *reinterpret_cast<float4*>(dst + h * kHeadDim) = make_float4(o[h][0], o[h][1], o[h][2], o[h][3]);
      *reinterpret_cast<float4*>(dst + h * kHeadDim + 4) = make_float4(o[h][4], o[h][5], o[h][6], o[h][7]);
    }
  }
#pragma unroll
  for (int r = 0; r < kHeld; ++r) {
    l[r] += __shfl_xor_sync(kFull, l[r], 1);
#pragma unroll
    for (int mask = kN; mask < 32; mask <<= 1) l[r] += __shfl_xor_sync(kFull, l[r], mask);
  }
  if (lg == 0 && gt == 0) {  // owners of the t = 0 logits: every head once (replicas agree)
#pragma unroll
    for (int r = 0; r < kHeld; ++r) {
      const int h = (gbits | r) & (kHeads - 1);
      mbuf[warp * kHeads + h] = m[r];
      lbuf[warp * kHeads + h] = l[r];
    }
  }
  __syncthreads();

  constexpr int kCols = kHeadDim / 8;
  constexpr int kUnits = kHeads * kCols;
  const int slot = item.partial_slot;
  const int out_elem = elem_bytes(a.out_dtype);
  for (int unit = tid; unit < kUnits; unit += C::kThreads) {
    const int h = unit / kCols;
    const int d0 = (unit - h * kCols) * 8;
    const int hl = tile * kHeads + h;
    if (hl >= a.group) continue;
    float mw[C::kWarps];
    float mmax = -INFINITY;
#pragma unroll
    for (int w = 0; w < C::kWarps; ++w) {
      mw[w] = mbuf[w * kHeads + h];
      mmax = fmaxf(mmax, mw[w]);
    }
    float lsum = 0.0f;
    float y[8];
#pragma unroll
    for (int d = 0; d < 8; ++d) y[d] = 0.0f;
#pragma unroll
    for (int w = 0; w < C::kWarps; ++w) {
      const float e = mw[w] == -INFINITY ? 0.0f : fast_exp2(mw[w] - mmax);
      lsum = fmaf(lbuf[w * kHeads + h], e, lsum);
#pragma unroll
      for (int g = 0; g < kLG; ++g) {
        const float* src = obuf + ((w * kLG + g) * kHeads + h) * kHeadDim + d0;
        const float4 v0 = *reinterpret_cast<const float4*>(src);
        const float4 v1 = *reinterpret_cast<const float4*>(src + 4);
        y[0] = fmaf(e, v0.x, y[0]);
        y[1] = fmaf(e, v0.y, y[1]);
        y[2] = fmaf(e, v0.z, y[2]);
        y[3] = fmaf(e, v0.w, y[3]);
        y[4] = fmaf(e, v1.x, y[4]);
        y[5] = fmaf(e, v1.y, y[5]);
        y[6] = fmaf(e, v1.z, y[6]);
        y[7] = fmaf(e, v1.w, y[7]);
      }
    }
    const float scale = lsum > 0.0f ? a.v_scale / lsum : 0.0f;  // empty range: zeros
#pragma unroll
    for (int d = 0; d < 8; ++d) y[d] *= scale;
    if (slot < 0) {
      const int64_t row = static_cast<int64_t>(req) * a.num_qo_heads + static_cast<int64_t>(kvh) * a.group + hl;
      store8_out(static_cast<char*>(a.out) + (row * kHeadDim + d0) * out_elem, a.out_dtype, y, a.out_scale);
    } else {
      const int64_t prow = static_cast<int64_t>(slot) * a.group + hl;
      float* po = a.workspace + prow * kHeadDim + d0;
      *reinterpret_cast<float4*>(po) = make_float4(y[0], y[1], y[2], y[3]);
      *reinterpret_cast<float4*>(po + 4) = make_float4(y[4], y[5], y[6], y[7]);
      if (d0 == 0) {
        const int64_t num_slots = ldg_i32(a.merge_indptr + static_cast<int64_t>(a.batch) * a.num_kv_heads);
        a.workspace[num_slots * a.group * kHeadDim + prow] = lsum > 0.0f ? (mmax + log2f(lsum)) * kLn2 : -INFINITY;
      }
    }
  }
#endif
}

// ------------------------------------------------------------------------------------------------
// Host side (instantiated once per translation unit).
// ------------------------------------------------------------------------------------------------

template <int kHeadDim, int kHeads, int kKv>
cudaError_t launch_fa2_config(const Fa2Args& args, int num_items, bool pdl, cudaStream_t stream) {
  using C = Fa2Config<kHeadDim, kHeads, kKv>;
  void (*kernel)(Fa2Args) = fa2_decode_kernel<kHeadDim, kHeads, kKv>;
  const cudaError_t status = ensure_smem_limit<fa2_decode_kernel<kHeadDim, kHeads, kKv>>(C::kSmemBytes);
  if (status != cudaSuccess) return status;
  return launch_kernel(kernel, dim3(static_cast<unsigned>(num_items) * static_cast<unsigned>(args.tiles), 1, 1),
                       dim3(C::kThreads, 1, 1), C::kSmemBytes, stream, pdl, args);
}

template <int kHeadDim, int kKv>
cudaError_t launch_fa2_heads(const Fa2Args& args, int num_items, bool pdl, cudaStream_t stream) {
  switch (fa2_heads_per_cta(args.group)) {
    case 1: return launch_fa2_config<kHeadDim, 1, kKv>(args, num_items, pdl, stream);
    case 2: return launch_fa2_config<kHeadDim, 2, kKv>(args, num_items, pdl, stream);
    case 4: return launch_fa2_config<kHeadDim, 4, kKv>(args, num_items, pdl, stream);
    case 8: return launch_fa2_config<kHeadDim, 8, kKv>(args, num_items, pdl, stream);
    default: return cudaErrorInvalidValue;
  }
}

template <int kKv>
cudaError_t launch_fa2_kv(const Fa2Args& args, int num_items, int head_dim, bool pdl, cudaStream_t stream) {
  switch (head_dim) {
    case 64: return launch_fa2_heads<64, kKv>(args, num_items, pdl, stream);
    case 128: return launch_fa2_heads<128, kKv>(args, num_items, pdl, stream);
    case 256: return launch_fa2_heads<256, kKv>(args, num_items, pdl, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace kbench::kernels::decode_detail::fa2
