// kbench's tensor-core decode-attention kernel ("fa2_tc", FlashInfer's tensor-core decode in the
// FlashAttention-2 style on mma.sync). Private to kernels/attention/decode: the public entry is
// launch_decode(DecodeKernel::fa2_tc, ...); decode_fa2_tc_launch.cu validates and dispatches to the
// per-KV-dtype translation units decode_fa2_tc_<kv>.cu, each of which instantiates the kernel for
// head_dim 64, 128 and 256 (fp8 also head pairs at 128).
//
// One CTA (4 warps, 128 threads) per (work item, M tile of 16 query heads): blockIdx.x is the work
// item, blockIdx.y the M tile (groups of up to 16 query heads need one; larger groups re-read the
// item's KV, mostly from L2). The `group` query heads of the kv head are the M rows of
// mma.sync.m16n8k16 (padded with zero rows to 16), so every K/V element is read from HBM once for
// all of them.
//
// Head pairs (kItems = 2; the launch picks them for an NHD fp8 cache, head_dim 128, group <= 8, an
// even number of kv heads): one CTA runs work items 2x and 2x + 1, which plan_decode makes heads h
// and h + 1 of one chunk. A shared-memory row holds both heads' rows side by side (256 bytes: in
// NHD that is one contiguous read, where one head's fp8 row is 128 bytes at a 1 KB stride), and
// the M tile holds both items' query heads: rows 0..7 item 0's, 8..15 item 1's. S and P V run per
// item (S: each item's K against all Q rows, in accumulators of its own, keeping that item's rows;
// P V: P with the other item's rows zeroed, into one O), so the MMAs per byte are those of one item
// per CTA, while the softmax, the barriers and the address work per byte halve. The kernel does
// not rely on the pairing: any two items work (their rows are fetched separately; an empty or
// absent item loads its partner's tokens, all masked); a mismatched pair only costs reads (the
// shorter item's rows re-read its last token, mostly from L2, until the longer one ends). The
// zeroed P rows do meet the partner's V: a NaN or Inf in one item's V values reaches its partner's
// output (finite caches are unaffected).
//
// Main loop, per tile of 64 tokens (kTileTokens):
//  * Loads: K and V rows of the tile go to shared memory by 16-byte cp.async.cg (L2 only) into a
//    kStages-deep ring of stages; the ring keeps up to kStages - 1 tiles in flight while one is
//    consumed (one __syncthreads per tile). The address of every token's K row (page-table lookup:
//    any page size, NHD or HND; its V row is a constant offset away) is computed by threads 0..63
//    (head pairs: 64 i .. 64 i + 63 for item i) kStages tiles ahead and kept in shared memory; the
//    page index of tile j + 2 kStages - 1 is fetched by a 4-byte cp.async in iteration j's group
//    into a ring of kStages index slots and read back (by the thread that fetched it) in iteration
//    j + kStages - 1: like the tile data it has kStages - 1 iterations to arrive. (A page-index
//    load issued and consumed in the same iteration put one loaded-L2/HBM latency on every tile's
//    critical path: ~3 us per tile per CTA, fine for a 32 KB bf16 tile, the bound for a 16 KB fp8
//    one.) Rows past the end of the range load the range's last token (finite data; their logits
//    are masked to -inf, so P = 0): the loader needs no predicate and no zero fill.
//  * Shared-memory layout: [64 tokens][kItems * head_dim * sizeof(kv)] per K / V tile, 16-byte
//    chunks XOR swizzled by the row (chunk ^ (row & 7); fp8 head_dim 64 rows are 4 chunks: chunk ^
//    ((row >> 1) & 3)), so cp.async stores and ldmatrix loads are bank-conflict free.
//  * Math: warp w owns tokens [16 w, 16 w + 16) of every tile and keeps its own online-softmax
//    state (row max, partial row sums, O accumulators 16 x head_dim fp32 in registers). S = Q K^T:
//    Q fragments (A, 16 x head_dim) stay in registers; K fragments (B) come by ldmatrix.x4 (tokens
//    on N). P = exp2(S * scale - m) is converted in registers into the A operand of P V (tokens on
//    K); V fragments by ldmatrix.x4.trans (head_dim on N). O is rescaled only when a row max of the
//    warp moved. bf16 MMAs take P as hi + lo bf16 parts (two MMAs per n tile): bf16 P alone has
//    8 significant bits, ~1e-3 |v| absolute error in O (visible through fp8 outputs with a small
//    out_scale); fp16 P (fp16 / fp8 KV) has 11.
//  * fp8 KV (e4m3 / e5m2): shared memory holds the fp8 bytes (half the traffic); ldmatrix loads
//    them as if they were 16-bit pairs and the registers are converted to fp16 (exact for both
//    formats: cvt.rn.f16x2.e4m3x2 on sm_89+, a bit trick plus one multiply on sm_80; e5m2 is a
//    byte permute). The head_dim positions that ldmatrix hands a thread for K are permuted within
//    each 16-dim block; the Q fragments use the same permutation. For V, an 8x8 transpose of byte
//    pairs gives every thread two tokens x two dims; a byte permute splits them into the B
//    fragments of the even and odd dims (two n tiles), so the O columns are permuted likewise and
//    un-permuted at the end. fp8 KV uses fp16 MMAs (bf16 / fp16 KV: MMAs of the KV type); q is
//    converted to the MMA type when loaded; k_scale, q_scale and sm_scale fold into the logit scale,
//    v_scale into the output.
//  * End: the four warps' (m, l, O) merge through shared memory (reusing the stage ring); the
//    item writes either the final output (out_dtype; fp8: o / out_scale, RNE, saturated) or its
//    normalised partial output and log-sum-exp (workspace, fp32; partial_lse starts after
//    merge_indptr[batch * num_kv_heads] slots of partial_o).
//
// Shared memory per CTA and resident CTAs per H100 SM (228 KB), kStages by the tile's K + V bytes;
// registers (sm_90a) in brackets, no spills:
//   head_dim 64,  fp8:  8 KB tiles, 6 stages,  55 KB: 4 CTAs  (~110 regs)
//   head_dim 64,  16b: 16 KB tiles, 3 stages,  54 KB: 4 CTAs  (~120 regs)
//   head_dim 128, fp8: 16 KB tiles, 4 stages,  72 KB: 3 CTAs  (~158 regs)
//   head_dim 128, fp8 head pairs:
//                      32 KB tiles, 3 stages, 105 KB: 2 CTAs  (~212 regs)
//   head_dim 128, 16b: 32 KB tiles, 3 stages, 103 KB: 2 CTAs  (~179 regs)
//   head_dim 256, fp8: 32 KB tiles, 3 stages, 107 KB: 2 CTAs  (~239 regs)
//   head_dim 256, 16b: 64 KB tiles, 3 stages, 203 KB: 1 CTA   (~255 regs); 2 stages (138 KB) where a
//                      block may not have 202 KB (A100: 163 KB).
#pragma once

#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/attention/decode/decode_internal.hpp"

#if defined(__CUDACC__)
#include "kernels/common/fp8_pack.cuh"
#include "kernels/common/mma_sm80.cuh"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

namespace kbench::kernels::decode_tc_detail {

// Element codes of q and out (runtime: the conversion is cheap and happens once per element).
enum ElemCode : int { kBf16 = 0, kF16 = 1, kE4m3 = 2, kE5m2 = 3 };

// Kernel arguments (by value). Byte offsets and strides into the cache.
struct TcArgs {
  const void* q;
  void* out;
  const uint8_t* kv;                 // cache base
  const int32_t* indptr;
  const int32_t* indices;
  const DecodeWorkItem* items;
  const int32_t* merge_indptr;       // its last entry is the number of partial slots
  float* partial_o;                  // workspace base (partial_o, then partial_lse)
  int64_t page_stride;               // bytes between pages
  int64_t slot_stride;               // bytes between slots of a page
  int64_t head_stride;               // bytes between kv heads
  int64_t v_offset;                  // bytes from a K row to its V row
  int page_size;
  int batch;
  int num_kv_heads;
  int num_qo_heads;
  int group;
  int q_code;
  int out_code;
  float scale_log2;                  // sm_scale * q_scale * k_scale * log2(e)
  float v_scale;
  float out_scale;
  int num_items;
};

// One per translation unit decode_fa2_tc_<kv>.cu. items_per_cta: 1, or 2 for head pairs (fp8 KV,
// head_dim 128, group <= 8: see the top of this file); max_smem: the device's opt-in shared memory
// per block (bytes).
#define KBENCH_FA2_TC_DECLARE(NAME)                                                                       \
  [[nodiscard]] cudaError_t launch_##NAME(const TcArgs& args, int head_dim, int items_per_cta, int m_tiles, \
                                          int max_smem, bool pdl, cudaStream_t stream)
KBENCH_FA2_TC_DECLARE(bf16);
KBENCH_FA2_TC_DECLARE(fp16);
KBENCH_FA2_TC_DECLARE(e4m3);
KBENCH_FA2_TC_DECLARE(e5m2);
#undef KBENCH_FA2_TC_DECLARE

// ------------------------------------------------------------------------------------------------
// Configuration and the shared-memory geometry (host and device: the CPU sanity check uses it).
// ------------------------------------------------------------------------------------------------

inline constexpr int kWarps = 4;
inline constexpr int kThreads = 32 * kWarps;
inline constexpr int kTileTokens = 16 * kWarps;  // 16 tokens per warp and tile
inline constexpr int kMRows = 16;                // query heads per CTA (M of the MMA)

// Stages by the bytes of one stage (K + V of a tile; `items` heads side by side). A 16-bit head_dim
// 64 cache takes three stages, not four, so that four CTAs fit an SM (54 KB each, ~120 registers):
// 64 kv heads' worth of 8192-token requests at batch 64 are then one wave of 512 CTAs on 528 slots
// instead of 1.3 waves on 396 (split threefold to balance them: 389 us, cuDNN's one wave 364 us).
constexpr int default_stages(int head_dim, int kv_bytes, int items = 1) {
  const int stage_bytes = 2 * kTileTokens * head_dim * kv_bytes * items;
  if (head_dim == 64 && kv_bytes == 2) return 3;
  return stage_bytes <= 8192 ? 6 : (stage_bytes <= 16384 ? 4 : 3);
}

template <int D, int kKvBytes, int kStages, int kItems = 1>
struct TcConfig {
  static_assert(D == 64 || D == 128 || D == 256, "head_dim 64, 128 or 256");
  static_assert(kKvBytes == 1 || kKvBytes == 2, "16-bit or fp8 KV");
  static_assert(kStages >= 2, "at least double buffering");
  static_assert(kItems == 1 || (kItems == 2 && kKvBytes == 1), "head pairs: fp8 KV only");
  static constexpr bool kFp8 = kKvBytes == 1;
  static constexpr int kItemRowBytes = D * kKvBytes;     // one token's row of one head
  static constexpr int kRowBytes = kItems * kItemRowBytes;  // a shared-memory row: the items' heads side by side
  static constexpr int kCpr = kRowBytes / 16;            // 16-byte chunks per row: 4..32
  static constexpr int kItemCpr = kItemRowBytes / 16;
  static_assert(kCpr >= 4 && kThreads % kCpr == 0);
  static constexpr int kRowsPerItem = kMRows / kItems;   // M rows (query heads) of each item
  static constexpr int kTileBytes = kTileTokens * kRowBytes;  // K (or V) of one tile
  static constexpr int kStageBytes = 2 * kTileBytes;
  static constexpr int kRowsPerPass = kThreads / kCpr;   // loader: rows per pass of the CTA
  static constexpr int kLoadPasses = kTileTokens / kRowsPerPass;
  static constexpr int kQStride = D + 8;                 // Q in shared memory: 16-bit elements
  static constexpr int kOStride = D + 8;                 // merge: floats per row
  static constexpr int kQOffset = kStages * kStageBytes;
  static constexpr int kOffsOffset = kQOffset + kMRows * kQStride * 2;  // row addresses [item][stage][token]
  static constexpr int kMlOffset = kOffsOffset + kItems * kStages * kTileTokens * 8;
  static constexpr int kIdxOffset = kMlOffset + 2 * kWarps * kMRows * 4;  // page-index ring [item][stage][token]
  static constexpr int kSmemBytes = kIdxOffset + kItems * kStages * kTileTokens * 4;
  static constexpr int kMergeBytes = kWarps * kMRows * kOStride * 4;
  static_assert(kMergeBytes <= kStages * kStageBytes, "the merge reuses the stage ring");
  // Resident CTAs per SM the shared memory allows on an H100 (bounds the registers ptxas may use).
  static constexpr int kFitH100 = 233472 / (kSmemBytes + 1024);  // 228 KB per SM, 1 KB reserved per CTA
  static constexpr int kMinBlocks = kFitH100 < 1 ? 1 : (kFitH100 > 4 ? 4 : kFitH100);

  // Byte offset of 16-byte chunk `chunk` of row `row` within a K or V tile.
  __host__ __device__ static constexpr int swizzle_xor(int row) {
    return kCpr >= 8 ? (row & 7) : ((row >> 1) & 3);
  }
  __host__ __device__ static constexpr int tile_offset(int row, int chunk) {
    return row * kRowBytes + ((chunk ^ swizzle_xor(row)) << 4);
  }

  // ldmatrix lane addressing. Each x4 ldmatrix reads four 8x8 matrices of 16-bit elements (rows of
  // 16 bytes); lane l gives the row address of matrix l / 8, row l % 8. The row of lane `lane`
  // within the warp's 16 tokens and the low bits of the logical chunk are lane constants; the
  // per-step chunk base (a multiple of 2 or 4) is XORed in: phys = (base ^ lane_bits) ^ swz(row).
  //   16-bit K  (non-trans): matrix (n tile nt = mi / 2, chunk 2 kk + mi % 2)
  //   16-bit V  (trans)    : matrix (token half mi % 2, chunk 2 c16 + mi / 2)
  //   fp8 K     (non-trans): matrix (tokens 8 nt.., chunk 4 k64 + mi), one ldmatrix per n tile
  //   fp8 V     (trans)    : matrix (token half mi % 2, chunk 2 c32 + mi / 2)
  __host__ __device__ static constexpr int k_lane_row(int lane) {
    return kFp8 ? (lane & 7) : (((lane >> 4) & 1) * 8 + (lane & 7));
  }
  __host__ __device__ static constexpr int k_lane_chunk_bits(int lane) {
    return kFp8 ? ((lane >> 3) & 3) : ((lane >> 3) & 1);
  }
  __host__ __device__ static constexpr int v_lane_row(int lane) { return ((lane >> 3) & 1) * 8 + (lane & 7); }
  __host__ __device__ static constexpr int v_lane_chunk_bits(int lane) { return (lane >> 4) & 1; }
};

template <class KvT>
struct KvInfo;

#if defined(__CUDACC__)

// ------------------------------------------------------------------------------------------------
// PTX helpers
// ------------------------------------------------------------------------------------------------

using sm80::cp_async_commit;
using sm80::cp_async_wait;
using sm80::ex2;
using sm80::ldsm_x4;
using sm80::ldsm_x4_trans;
using sm80::mma16816;
using sm80::pack2;
using sm80::smem_u32;

// 16 bytes global -> shared, L2 only. The 256-byte L2 prefetch also brings the neighbouring kv
// head's row of an NHD page (128 bytes apart in fp8, where head pairs do not apply), which the CTA
// for that head, launched beside this one, reads next.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) { sm80::cp_async16<256>(dst, src); }
// 4 bytes global -> shared (the page-index prefetch).
__device__ __forceinline__ void cp_async4(uint32_t dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}

// The halves of a bf16x2 register as floats.
__device__ __forceinline__ float bf16_lo(uint32_t x) { return __uint_as_float(x << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t x) { return __uint_as_float(x & 0xFFFF0000u); }

// ------------------------------------------------------------------------------------------------
// q / out element conversions (runtime element code)
// ------------------------------------------------------------------------------------------------

__device__ __forceinline__ float fp8_to_float(uint32_t byte, bool e4m3) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(byte), e4m3 ? __NV_E4M3 : __NV_E5M2);
  return __half2float(__half(h));
}

// Eight consecutive q elements (a 16-byte vector for 16-bit q, 8 bytes for fp8) as floats.
__device__ __forceinline__ void load_q8(const void* q, int64_t elem, int code, float (&f)[8]) {
  if (code == kBf16 || code == kF16) {
    const uint4 v = *reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(q) + elem);
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (code == kBf16) {
        f[2 * j] = __uint_as_float(w[j] << 16);
        f[2 * j + 1] = __uint_as_float(w[j] & 0xFFFF0000u);
      } else {
        __half2 h;
        memcpy(&h, &w[j], 4);
        const float2 t = __half22float2(h);
        f[2 * j] = t.x;
        f[2 * j + 1] = t.y;
      }
    }
  } else {
    const uint2 v = *reinterpret_cast<const uint2*>(static_cast<const uint8_t*>(q) + elem);
    const bool e4m3 = code == kE4m3;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      f[j] = fp8_to_float((v.x >> (8 * j)) & 0xFFu, e4m3);
      f[4 + j] = fp8_to_float((v.y >> (8 * j)) & 0xFFu, e4m3);
    }
  }
}

// Four consecutive output elements.
__device__ __forceinline__ void store_out4(void* out, int64_t elem, int code, float out_scale, const float (&y)[4]) {
  if (code == kBf16) {
    uint2 v;
    v.x = pack2<false>(y[0], y[1]);
    v.y = pack2<false>(y[2], y[3]);
    *reinterpret_cast<uint2*>(static_cast<uint16_t*>(out) + elem) = v;
  } else if (code == kF16) {
    uint2 v;
    v.x = pack2<true>(y[0], y[1]);
    v.y = pack2<true>(y[2], y[3]);
    *reinterpret_cast<uint2*>(static_cast<uint16_t*>(out) + elem) = v;
  } else {
    const __nv_fp8_interpretation_t kind = code == kE4m3 ? __NV_E4M3 : __NV_E5M2;
    const uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(y[0] / out_scale, y[1] / out_scale), __NV_SATFINITE, kind);
    const uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(y[2] / out_scale, y[3] / out_scale), __NV_SATFINITE, kind);
    *reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(out) + elem) = lo | (hi << 16);
  }
}

// ------------------------------------------------------------------------------------------------
// The kernel
// ------------------------------------------------------------------------------------------------

template <>
struct KvInfo<__nv_bfloat16> {
  static constexpr int kBytes = 2;
  static constexpr bool kF16Mma = false;
  static constexpr bool kE4m3 = false;
};
template <>
struct KvInfo<__half> {
  static constexpr int kBytes = 2;
  static constexpr bool kF16Mma = true;
  static constexpr bool kE4m3 = false;
};
template <>
struct KvInfo<__nv_fp8_e4m3> {
  static constexpr int kBytes = 1;
  static constexpr bool kF16Mma = true;
  static constexpr bool kE4m3 = true;
};
template <>
struct KvInfo<__nv_fp8_e5m2> {
  static constexpr int kBytes = 1;
  static constexpr bool kF16Mma = true;
  static constexpr bool kE4m3 = false;
};

// Address of a token's K row in the cache, from its page and slot.
__device__ __forceinline__ const uint8_t* token_row(const TcArgs& a, int page, int slot, int64_t head_off) {
  return a.kv + (static_cast<int64_t>(page) * a.page_stride + static_cast<int64_t>(slot) * a.slot_stride + head_off);
}

struct ItemView {
  int request;
  int kv_head;
  int token_begin;
  int token_end;
  int partial_slot;
};

__device__ __forceinline__ ItemView load_item(const DecodeWorkItem* item) {
  return {__ldg(&item->request), __ldg(&item->kv_head), __ldg(&item->token_begin), __ldg(&item->token_end),
          __ldg(&item->partial_slot)};
}

// items[i] for a runtime i: a select, not a local-memory array.
template <int N>
__device__ __forceinline__ ItemView pick(const ItemView (&items)[N], int i) {
  static_assert(N == 1 || N == 2);
  if constexpr (N == 1) {
    return items[0];
  } else {
    return i == 0 ? items[0] : items[1];
  }
}

// Head pairs: M rows gr (registers 0 and 2 of an A fragment) belong to item 0, rows gr + 8
// (registers 1 and 3) to item 1. Item kItem's A operand (P of P V) has the other item's rows
// zeroed, so both items accumulate into one O.
template <int kItems, int kItem>
__device__ __forceinline__ void item_rows(const uint32_t (&x)[4], uint32_t (&y)[4]) {
  y[0] = kItems == 1 || kItem == 0 ? x[0] : 0u;
  y[1] = kItems == 1 || kItem == 1 ? x[1] : 0u;
  y[2] = kItems == 1 || kItem == 0 ? x[2] : 0u;
  y[3] = kItems == 1 || kItem == 1 ? x[3] : 0u;
}

template <int D, class KvT, int kStages, int kItems>
__global__ void __launch_bounds__(kThreads, (TcConfig<D, KvInfo<KvT>::kBytes, kStages, kItems>::kMinBlocks))
    fa2_tc_kernel(const TcArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // cp.async and bf16 conversions need sm_80: the routine never launches this here
#else
  using Cfg = TcConfig<D, KvInfo<KvT>::kBytes, kStages, kItems>;
  constexpr bool kFp8 = Cfg::kFp8;
  constexpr bool kF16 = KvInfo<KvT>::kF16Mma;
  constexpr bool kE4m3 = KvInfo<KvT>::kE4m3;
  constexpr int kKSteps = D / 16;  // k steps of S = Q K^T (per item)
  constexpr int kNTiles = D / 8;   // n tiles of O

  extern __shared__ __align__(128) uint8_t smem[];
  uint8_t* const q_smem = smem + Cfg::kQOffset;
  const uint8_t** const rows = reinterpret_cast<const uint8_t**>(smem + Cfg::kOffsOffset);
  float* const sm_m = reinterpret_cast<float*>(smem + Cfg::kMlOffset);
  float* const sm_l = sm_m + kWarps * kMRows;
  const int32_t* const idx_ring = reinterpret_cast<const int32_t*>(smem + Cfg::kIdxOffset);
  const uint32_t smem_base = smem_u32(smem);

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int gr = lane >> 2;  // fragment row (query head) and n index
  const int qd = lane & 3;   // fragment column pair

  pdl_wait();

  // The CTA's work items: blockIdx.x * kItems + i. A second item past the end of the list is
  // absent (empty, writes nothing). Item i's query heads are the M rows from kRowsPerItem * i.
  const int items_here = kItems == 1 ? 1 : min(kItems, a.num_items - static_cast<int>(blockIdx.x) * kItems);
  ItemView items[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    items[i] = i < items_here ? load_item(a.items + (blockIdx.x * kItems + i)) : ItemView{0, 0, 0, 0, -1};
  }
  const int g0 = static_cast<int>(blockIdx.y) * kMRows;  // 0 with head pairs (group <= 8: one M tile)
  const int rows_valid = min(Cfg::kRowsPerItem, a.group - g0);  // query heads of each item here
  // Row addresses: threads 64 i .. 64 i + 63 build item i's, one token each. An empty item's rows
  // load its partner's tokens instead (finite data; its logits are all masked).
  const int addr_item = kItems == 1 ? 0 : tid / kTileTokens;
  ItemView src = items[0];
  if constexpr (kItems == 2) {
    const ItemView mine = pick(items, addr_item);
    const bool own = mine.token_end > mine.token_begin;
    src = (addr_item == 1) == own ? items[1] : items[0];
  }
  const int page_base = __ldg(a.indptr + src.request);
  const int64_t head_off = static_cast<int64_t>(src.kv_head) * a.head_stride;
  const int len0 = max(items[0].token_end - items[0].token_begin, 0);
  const int len = kItems == 1 ? len0 : max(len0, items[kItems - 1].token_end - items[kItems - 1].token_begin);
  const int num_tiles = (len + kTileTokens - 1) / kTileTokens;
  const int P = a.page_size;
  const int addr_tok = tid - addr_item * kTileTokens;
  const bool addr_thread = tid < kItems * kTileTokens;
  const int addr_begin = src.token_begin;
  const int addr_end = src.token_end;
  // The thread's entry of stage 0 in rows and the index ring ([item][stage][token]).
  const int addr_slot = addr_item * kStages * kTileTokens + addr_tok;

  // K row addresses of tiles 0 .. kStages-1. Tokens past the end of the range load the range's
  // last token instead (finite data; the logits are masked, so their P is 0): no zero fill, no
  // predicate in the loader.
  // The page indices of tiles kStages .. 2 kStages - 2 go to the index ring (slot tile % kStages,
  // read back only by the thread that wrote it): the main loop keeps the ring kStages - 1 tiles ahead
  // of its use by cp.async, so no page-index load sits on the per-tile critical path.
  if (addr_thread && len > 0) {
    int tok[2 * kStages - 1];
    int page[2 * kStages - 1];
#pragma unroll
    for (int t = 0; t < 2 * kStages - 1; ++t) {
      tok[t] = min(addr_begin + t * kTileTokens + addr_tok, addr_end - 1);
      page[t] = t < kStages || t < num_tiles ? __ldg(a.indices + page_base + tok[t] / P) : 0;
    }
#pragma unroll
    for (int t = 0; t < kStages; ++t) rows[t * kTileTokens + addr_slot] = token_row(a, page[t], tok[t] % P, head_off);
    int32_t* const ring = reinterpret_cast<int32_t*>(smem + Cfg::kIdxOffset);
#pragma unroll
    for (int t = kStages; t < 2 * kStages - 1; ++t) ring[(t % kStages) * kTileTokens + addr_slot] = page[t];
  }

  // Q rows g0 .. g0+15 of this kv head (head pairs: rows 0..7 item 0's, 8..15 item 1's) -> shared
  // memory, converted to the MMA type (zero rows past the group).
  {
    constexpr int kVecPerRow = D / 8;
    const int64_t q_row0 =
        static_cast<int64_t>(items[0].request) * a.num_qo_heads + static_cast<int64_t>(items[0].kv_head) * a.group + g0;
    [[maybe_unused]] const int64_t q_row1 = static_cast<int64_t>(items[kItems - 1].request) * a.num_qo_heads +
                                            static_cast<int64_t>(items[kItems - 1].kv_head) * a.group;
    for (int v = tid; v < kMRows * kVecPerRow; v += kThreads) {
      const int row = v / kVecPerRow;
      const int c8 = v % kVecPerRow;
      float f[8];
      const bool second = kItems == 2 && row >= Cfg::kRowsPerItem;  // a row of head pairs' item 1
      const int g = second ? row - Cfg::kRowsPerItem : row;
      if (g < rows_valid && (!second || items_here == 2)) {
        load_q8(a.q, ((second ? q_row1 : q_row0) + g) * D + c8 * 8, a.q_code, f);
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) f[j] = 0.0f;
      }
      uint4 p;
      p.x = pack2<kF16>(f[0], f[1]);
      p.y = pack2<kF16>(f[2], f[3]);
      p.z = pack2<kF16>(f[4], f[5]);
      p.w = pack2<kF16>(f[6], f[7]);
      *reinterpret_cast<uint4*>(q_smem + (row * Cfg::kQStride + c8 * 8) * 2) = p;
    }
  }
  __syncthreads();

  // Loader: thread tid copies chunk tid % kCpr of rows tid / kCpr + i * kRowsPerPass, K and V; the
  // chunk lies in the head of item ld_item.
  const int ld_chunk = tid % Cfg::kCpr;
  const int ld_row0 = tid / Cfg::kCpr;
  const int ld_item = kItems == 1 ? 0 : ld_chunk / Cfg::kItemCpr;
  const int ld_item_chunk = ld_chunk - ld_item * Cfg::kItemCpr;
  const uint8_t* const* const ld_rows = rows + ld_item * kStages * kTileTokens;
  auto issue_tile = [&](int stage) {
    const uint8_t* const* const tile_rows = ld_rows + stage * kTileTokens;
    const uint32_t stage_addr = smem_base + stage * Cfg::kStageBytes;
#pragma unroll
    for (int i = 0; i < Cfg::kLoadPasses; ++i) {
      const int row = ld_row0 + i * Cfg::kRowsPerPass;
      const uint8_t* src = tile_rows[row] + ld_item_chunk * 16;
      const uint32_t dst = stage_addr + Cfg::tile_offset(row, ld_chunk);
      cp_async16(dst, src);
      cp_async16(dst + Cfg::kTileBytes, src + a.v_offset);
    }
  };

#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < num_tiles) issue_tile(t);
    cp_async_commit();
  }

  // Q fragments (A operand, one per k step of 16 head_dim positions).
  uint32_t qa[kKSteps][4];
  if constexpr (!kFp8) {
    const int row = (lane & 7) + ((lane >> 3) & 1) * 8;
    const int col = ((lane >> 4) & 1) * 8;
    const uint32_t base = smem_u32(q_smem) + (row * Cfg::kQStride + col) * 2;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) ldsm_x4(base + kk * 32, qa[kk]);
  } else {
    // fp8 K: the thread's B registers of k step kk hold head_dim 16 kk + 4 qd + {0, 1} (k 2 qd + {0, 1})
    // and 16 kk + 4 qd + {2, 3} (k 2 qd + 8 + {0, 1}). Head pairs: registers 0, 2 are item 0's query
    // head gr, registers 1, 3 item 1's.
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      const uint2 lo = *reinterpret_cast<const uint2*>(q_smem + (gr * Cfg::kQStride + 16 * kk + 4 * qd) * 2);
      const uint2 hi = *reinterpret_cast<const uint2*>(q_smem + ((gr + 8) * Cfg::kQStride + 16 * kk + 4 * qd) * 2);
      qa[kk][0] = lo.x;
      qa[kk][1] = hi.x;
      qa[kk][2] = lo.y;
      qa[kk][3] = hi.y;
    }
  }

  // Per-lane ldmatrix addresses (relative to a stage), see TcConfig.
  const int k_row = warp * 16 + Cfg::k_lane_row(lane);
  const uint32_t k_lane_base = static_cast<uint32_t>(k_row * Cfg::kRowBytes);
  const int k_xor = Cfg::k_lane_chunk_bits(lane) ^ Cfg::swizzle_xor(k_row);
  const int v_row = warp * 16 + Cfg::v_lane_row(lane);
  const uint32_t v_lane_base = static_cast<uint32_t>(v_row * Cfg::kRowBytes + Cfg::kTileBytes);
  const int v_xor = Cfg::v_lane_chunk_bits(lane) ^ Cfg::swizzle_xor(v_row);

  float o[kNTiles][4];
#pragma unroll
  for (int n = 0; n < kNTiles; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY;  // rows gr, gr + 8 (log2 domain)
  float l0 = 0.0f, l1 = 0.0f;            // this thread's partial row sums
  const float scale = a.scale_log2;

  int stage_compute = 0;
  int stage_load = kStages - 1;
  for (int j = 0; j < num_tiles; ++j) {
    // Page index of tile j + 2 kStages - 1 -> the index ring, in this iteration's cp.async group:
    // complete by the wait of iteration j + kStages - 1, which builds that tile's row addresses.
    {
      const int t_idx = j + 2 * kStages - 1;
      if (addr_thread && t_idx < num_tiles) {
        const int tok = min(addr_begin + t_idx * kTileTokens + addr_tok, addr_end - 1);
        cp_async4(smem_base + Cfg::kIdxOffset + ((t_idx % kStages) * kTileTokens + addr_slot) * 4,
                  a.indices + page_base + tok / P);
      }
    }
    const bool pf = addr_thread && j + kStages < num_tiles;
    const int pf_tok = min(addr_begin + (j + kStages) * kTileTokens + addr_tok, addr_end - 1);

    cp_async_wait<kStages - 2>();
    __syncthreads();
    if (j + kStages - 1 < num_tiles) issue_tile(stage_load);
    cp_async_commit();

    const uint32_t stage_addr = smem_base + stage_compute * Cfg::kStageBytes;
    const uint32_t k_addr = stage_addr + k_lane_base;
    const uint32_t v_addr = stage_addr + v_lane_base;

    // S = Q K^T: s[nt] covers tokens 16 warp + 8 nt + 2 qd + {0, 1} of rows gr, gr + 8.
    float s[2][4];
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
    if constexpr (!kFp8) {
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk) {
        uint32_t b[4];
        ldsm_x4(k_addr + (((2 * kk) ^ k_xor) << 4), b);
        mma16816<kF16>(s[0], qa[kk], b[0], b[1]);
        mma16816<kF16>(s[1], qa[kk], b[2], b[3]);
      }
    } else {
      // Head pairs: item i's head is chunks [i kItemCpr, (i + 1) kItemCpr) of a row. Each item's K
      // meets all 16 Q rows in accumulators of its own (two independent MMA chains); item 0's rows gr
      // come from s, item 1's rows gr + 8 from s1, the other rows are dropped (cheaper than zeroed A
      // rows, which cost register moves per MMA).
      [[maybe_unused]] float s1[2][4];
      if constexpr (kItems == 2) {
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) s1[nt][0] = s1[nt][1] = s1[nt][2] = s1[nt][3] = 0.0f;
      }
#pragma unroll
      for (int k64 = 0; k64 < kItems * D / 64; ++k64) {
        uint32_t b0[4], b1[4];
        ldsm_x4(k_addr + (((4 * k64) ^ k_xor) << 4), b0);
        ldsm_x4(k_addr + 8 * Cfg::kRowBytes + (((4 * k64) ^ k_xor) << 4), b1);
        float(&acc)[2][4] = k64 < D / 64 ? s : s1;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int kk = 4 * (k64 % (D / 64)) + i;
          uint32_t lo, hi;
          fp8x4_to_f16<kE4m3>(b0[i], lo, hi);
          mma16816<true>(acc[0], qa[kk], lo, hi);
          fp8x4_to_f16<kE4m3>(b1[i], lo, hi);
          mma16816<true>(acc[1], qa[kk], lo, hi);
        }
      }
      if constexpr (kItems == 2) {
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          s[nt][2] = s1[nt][2];
          s[nt][3] = s1[nt][3];
        }
      }
    }

    // Scale to the log2 domain; mask tokens past the end of each item's range (registers 0, 1 are
    // row gr, 2, 3 row gr + 8: head pairs' item 1).
    const int tokens_left = items[0].token_end - (items[0].token_begin + j * kTileTokens);
    [[maybe_unused]] const int tokens_left1 =
        items[kItems - 1].token_end - (items[kItems - 1].token_begin + j * kTileTokens);
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[nt][e] *= scale;
    }
    if ((kItems == 1 ? tokens_left : min(tokens_left, tokens_left1)) < kTileTokens) {
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int tok = warp * 16 + nt * 8 + 2 * qd + (e & 1);
          if (tok >= (kItems == 1 || e < 2 ? tokens_left : tokens_left1)) s[nt][e] = -INFINITY;
        }
      }
    }

    // Online softmax (rows gr and gr + 8; the quad of lanes 4 gr .. 4 gr + 3 shares a row).
    float mx0 = fmaxf(fmaxf(s[0][0], s[0][1]), fmaxf(s[1][0], s[1][1]));
    float mx1 = fmaxf(fmaxf(s[0][2], s[0][3]), fmaxf(s[1][2], s[1][3]));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    const float mn0 = fmaxf(m0, mx0);
    const float mn1 = fmaxf(m1, mx1);
    const float base0 = mn0 == -INFINITY ? 0.0f : mn0;
    const float base1 = mn1 == -INFINITY ? 0.0f : mn1;
    const float corr0 = ex2(m0 - base0);
    const float corr1 = ex2(m1 - base1);
    m0 = mn0;
    m1 = mn1;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      s[nt][0] = ex2(s[nt][0] - base0);
      s[nt][1] = ex2(s[nt][1] - base0);
      s[nt][2] = ex2(s[nt][2] - base1);
      s[nt][3] = ex2(s[nt][3] - base1);
    }
    l0 = fmaf(l0, corr0, (s[0][0] + s[0][1]) + (s[1][0] + s[1][1]));
    l1 = fmaf(l1, corr1, (s[0][2] + s[0][3]) + (s[1][2] + s[1][3]));
    // Rescale O only when a row max of the warp moved (rare once the running max settles).
    if (__any_sync(0xffffffffu, corr0 != 1.0f || corr1 != 1.0f)) {
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
        o[n][0] *= corr0;
        o[n][1] *= corr0;
        o[n][2] *= corr1;
        o[n][3] *= corr1;
      }
    }

    // P as the A operand (tokens on K): the S accumulators of n tiles 0 and 1 are exactly the
    // A fragment of the 16 tokens.
    uint32_t pa[4];
    pa[0] = pack2<kF16>(s[0][0], s[0][1]);
    pa[1] = pack2<kF16>(s[0][2], s[0][3]);
    pa[2] = pack2<kF16>(s[1][0], s[1][1]);
    pa[3] = pack2<kF16>(s[1][2], s[1][3]);
    // bf16 P carries 8 significant bits: an error of up to 2^-9 |v| per token in O, which the row
    // sums (fp32, from the unrounded P) do not share. P = hi + lo with both parts bf16 (16 bits):
    // a second MMA per n tile with the residual.
    [[maybe_unused]] uint32_t pl[4];
    if constexpr (!kF16) {
      pl[0] = pack2<false>(s[0][0] - bf16_lo(pa[0]), s[0][1] - bf16_hi(pa[0]));
      pl[1] = pack2<false>(s[0][2] - bf16_lo(pa[1]), s[0][3] - bf16_hi(pa[1]));
      pl[2] = pack2<false>(s[1][0] - bf16_lo(pa[2]), s[1][1] - bf16_hi(pa[2]));
      pl[3] = pack2<false>(s[1][2] - bf16_lo(pa[3]), s[1][3] - bf16_hi(pa[3]));
    }

    // O += P V.
    if constexpr (!kFp8) {
#pragma unroll
      for (int c16 = 0; c16 < D / 16; ++c16) {
        uint32_t b[4];
        ldsm_x4_trans(v_addr + (((2 * c16) ^ v_xor) << 4), b);
        mma16816<kF16>(o[2 * c16], pa, b[0], b[1]);
        mma16816<kF16>(o[2 * c16 + 1], pa, b[2], b[3]);
        if constexpr (!kF16) {
          mma16816<false>(o[2 * c16], pl, b[0], b[1]);
          mma16816<false>(o[2 * c16 + 1], pl, b[2], b[3]);
        }
      }
    } else {
      // b[2h] / b[2h+1]: tokens 2qd, 2qd+1 / 8+2qd, 8+2qd+1 of head_dim 16 (2 c32 + h) + 2 gr + {0, 1}
      // (bytes [t0 d0, t0 d1, t1 d0, t1 d1]); even dims -> n tile 2 (2 c32 + h), odd -> +1. Head
      // pairs: the chunks of item i's head meet P with the other item's rows zeroed, and both items
      // accumulate into o (rows gr: item 0, rows gr + 8: item 1).
      uint32_t p_item[kItems][4];
      item_rows<kItems, 0>(pa, p_item[0]);
      if constexpr (kItems == 2) item_rows<kItems, 1>(pa, p_item[kItems - 1]);
#pragma unroll
      for (int c32 = 0; c32 < kItems * D / 32; ++c32) {
        uint32_t b[4];
        ldsm_x4_trans(v_addr + (((2 * c32) ^ v_xor) << 4), b);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          uint32_t e0, o0, e1, o1;
          fp8x4_to_f16<kE4m3>(__byte_perm(b[2 * h], 0u, 0x3120), e0, o0);
          fp8x4_to_f16<kE4m3>(__byte_perm(b[2 * h + 1], 0u, 0x3120), e1, o1);
          const int cc = 2 * (c32 % (D / 32)) + h;
          mma16816<true>(o[2 * cc], p_item[c32 / (D / 32)], e0, e1);
          mma16816<true>(o[2 * cc + 1], p_item[c32 / (D / 32)], o0, o1);
        }
      }
    }

    // Row addresses of tile j + kStages into the slot tile j used (free: tile j's loads were
    // issued kStages - 1 iterations ago, before the barrier above).
    if (pf) {
      const int pf_page = idx_ring[((j + kStages) % kStages) * kTileTokens + addr_slot];
      rows[stage_compute * kTileTokens + addr_slot] = token_row(a, pf_page, pf_tok % P, head_off);
    }
    stage_compute = stage_compute + 1 == kStages ? 0 : stage_compute + 1;
    stage_load = stage_load + 1 == kStages ? 0 : stage_load + 1;
  }

  pdl_launch_dependents();

  // ---- Merge the four warps' states through shared memory (the stage ring is free after this
  // barrier: only empty cp.async groups can be pending).
  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  cp_async_wait<0>();
  __syncthreads();
  float* const so = reinterpret_cast<float*>(smem);
  if (qd == 0) {
    sm_m[warp * kMRows + gr] = m0;
    sm_l[warp * kMRows + gr] = l0;
    sm_m[warp * kMRows + gr + 8] = m1;
    sm_l[warp * kMRows + gr + 8] = l1;
  }
  {
    float* const row0 = so + (warp * kMRows + gr) * Cfg::kOStride;
    float* const row1 = row0 + 8 * Cfg::kOStride;
    if constexpr (!kFp8) {
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
        *reinterpret_cast<float2*>(row0 + 8 * n + 2 * qd) = make_float2(o[n][0], o[n][1]);
        *reinterpret_cast<float2*>(row1 + 8 * n + 2 * qd) = make_float2(o[n][2], o[n][3]);
      }
    } else {
      // n tile 2 cc + p, column c -> head_dim 16 cc + 2 c + p: the thread holds 16 cc + 4 qd + {0..3}.
#pragma unroll
      for (int cc = 0; cc < D / 16; ++cc) {
        *reinterpret_cast<float4*>(row0 + 16 * cc + 4 * qd) =
            make_float4(o[2 * cc][0], o[2 * cc + 1][0], o[2 * cc][1], o[2 * cc + 1][1]);
        *reinterpret_cast<float4*>(row1 + 16 * cc + 4 * qd) =
            make_float4(o[2 * cc][2], o[2 * cc + 1][2], o[2 * cc][3], o[2 * cc + 1][3]);
      }
    }
  }
  __syncthreads();

  // ---- Output: thread handles 4 consecutive head_dim positions of one row per step.
  bool any_partial = items[0].partial_slot >= 0;
  if constexpr (kItems == 2) any_partial = any_partial || items[1].partial_slot >= 0;
  if (any_partial && (a.merge_indptr == nullptr || a.partial_o == nullptr)) return;  // not a valid plan
  float* partial_lse = nullptr;
  if (any_partial) {
    const int num_slots = __ldg(a.merge_indptr + static_cast<int64_t>(a.batch) * a.num_kv_heads);
    partial_lse = a.partial_o + static_cast<int64_t>(num_slots) * a.group * D;
  }
  constexpr int kQuads = D / 4;
  for (int i = tid; i < items_here * rows_valid * kQuads; i += kThreads) {
    const int r = i / kQuads;
    const int d = (i % kQuads) * 4;
    const int qi = kItems == 1 ? 0 : r / rows_valid;  // item
    const int row = qi * Cfg::kRowsPerItem + (r - qi * rows_valid);  // M row
    float mw[kWarps];
    float mmax = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      mw[w] = sm_m[w * kMRows + row];
      mmax = fmaxf(mmax, mw[w]);
    }
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float lsum = 0.0f;
    if (mmax != -INFINITY) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const float e = ex2(mw[w] - mmax);
        lsum = fmaf(sm_l[w * kMRows + row], e, lsum);
        const float4 v = *reinterpret_cast<const float4*>(so + (w * kMRows + row) * Cfg::kOStride + d);
        acc[0] = fmaf(v.x, e, acc[0]);
        acc[1] = fmaf(v.y, e, acc[1]);
        acc[2] = fmaf(v.z, e, acc[2]);
        acc[3] = fmaf(v.w, e, acc[3]);
      }
    }
    const float inv = lsum > 0.0f ? a.v_scale / lsum : 0.0f;
    float y[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) y[e] = acc[e] * inv;
    const ItemView it = pick(items, qi);
    const int g = g0 + row - qi * Cfg::kRowsPerItem;  // query head within the group
    const bool partial = kItems == 1 ? any_partial : it.partial_slot >= 0;  // one item: its own
    if (partial) {
      const int64_t prow = static_cast<int64_t>(it.partial_slot) * a.group + g;
      *reinterpret_cast<float4*>(a.partial_o + prow * D + d) = make_float4(y[0], y[1], y[2], y[3]);
      if (d == 0) {
        partial_lse[prow] = lsum > 0.0f ? (mmax + log2f(lsum)) * 0.69314718055994530942f : -INFINITY;
      }
    } else {
      const int64_t orow =
          static_cast<int64_t>(it.request) * a.num_qo_heads + static_cast<int64_t>(it.kv_head) * a.group + g;
      store_out4(a.out, orow * D + d, a.out_code, a.out_scale, y);
    }
  }
#endif
}

// ------------------------------------------------------------------------------------------------
// Host side: one instantiation set per translation unit.
// ------------------------------------------------------------------------------------------------

template <int D, class KvT, int kStages, int kItems = 1>
cudaError_t launch_config(const TcArgs& args, int m_tiles, int max_smem, bool pdl, cudaStream_t stream) {
  using Cfg = TcConfig<D, KvInfo<KvT>::kBytes, kStages, kItems>;
  constexpr int kSmem = Cfg::kSmemBytes;
  if (kSmem > max_smem) return cudaErrorInvalidValue;
  // Head pairs: each item's query heads fit its half of the one M tile.
  if (kItems > 1 && (m_tiles != 1 || args.group > Cfg::kRowsPerItem)) return cudaErrorInvalidValue;
  void (*kernel)(TcArgs) = fa2_tc_kernel<D, KvT, kStages, kItems>;
  const cudaError_t status = ensure_smem_limit<fa2_tc_kernel<D, KvT, kStages, kItems>>(kSmem);
  if (status != cudaSuccess) return status;
  const int ctas = (args.num_items + kItems - 1) / kItems;
  return launch_kernel(kernel, dim3(static_cast<unsigned>(ctas), static_cast<unsigned>(m_tiles), 1), dim3(kThreads, 1, 1),
                       kSmem, stream, pdl, args);
}

template <class KvT>
cudaError_t launch_typed(const TcArgs& args, int head_dim, int items_per_cta, int m_tiles, int max_smem,
                         bool pdl, cudaStream_t stream) {
  constexpr int kB = KvInfo<KvT>::kBytes;
  if constexpr (kB == 1) {
    if (items_per_cta == 2 && head_dim == 128) {
      return launch_config<128, KvT, default_stages(128, kB, 2), 2>(args, m_tiles, max_smem, pdl, stream);
    }
  }
  if (items_per_cta != 1) return cudaErrorInvalidValue;
  switch (head_dim) {
    case 64:
      return launch_config<64, KvT, default_stages(64, kB)>(args, m_tiles, max_smem, pdl, stream);
    case 128:
      return launch_config<128, KvT, default_stages(128, kB)>(args, m_tiles, max_smem, pdl, stream);
    case 256:
      if constexpr (kB == 2) {
        // 64 KB tiles: three stages where the device allows 203 KB per block (H100), else two.
        if (TcConfig<256, kB, 3>::kSmemBytes <= max_smem) {
          return launch_config<256, KvT, 3>(args, m_tiles, max_smem, pdl, stream);
        }
        return launch_config<256, KvT, 2>(args, m_tiles, max_smem, pdl, stream);
      } else {
        return launch_config<256, KvT, default_stages(256, kB)>(args, m_tiles, max_smem, pdl, stream);
      }
    default: return cudaErrorInvalidValue;
  }
}

#endif  // __CUDACC__

}  // namespace kbench::kernels::decode_tc_detail
