// fa3 prefill (sm_90a): what the dispatch (prefill_fa3_launch.cu) and the per-head-dim translation
// units (prefill_fa3_<dims>.cu) share. The kernel itself is in prefill_fa3_kernel.cuh.
#pragma once

#include <cuda.h>  // CUtensorMap (the type only: the driver is reached through cudaGetDriverEntryPoint)
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/attention/prefill/prefill.hpp"
#include "kernels/common/fast_divisor.hpp"

namespace kbench::kernels::prefill_fa3 {

// Rows of q per work item: two consumer warpgroups of 64 rows.
inline constexpr int kBlockM = 128;

// Keys per KV tile by head dims (registers decide: head 256's O takes 128 registers per consumer
// thread, and S, P of more than 64 keys would spill). The host builds the ragged K/V tensor maps
// with this box height.
[[nodiscard]] constexpr int block_n(int head_dim_qk) { return head_dim_qk == 256 ? 64 : 128; }

// Ragged, non-causal head 128 with 16-bit inputs takes wider KV tiles: the per-tile fixed costs (the
// warpgroups' GEMM-turn hand-overs, barrier waits, O rescaling) spread over more keys. The consumers
// then need 240 registers (S and O, and P of the tile whose PV GEMM is in flight) and two K/V
// stages fit. Causal keeps 128 (the diagonal tile's masked part grows with the width), paged keeps
// 128 (page-aligned tiles).
inline constexpr int kWideBlockN = 192;

// Ragged head 256 with 16-bit inputs, causal or not: 80-key tiles (FlashAttention-3's choice for
// this head size): two K/V stages of 80 keys fit beside Q (224 KB), and the consumers take S of 80
// keys beside O's 128 registers with the wide tiles' 240.
inline constexpr int kHead256WideBlockN = 80;

// Output element types (runtime: converted once per element in the epilogue).
enum class OutType : int32_t { bf16 = 0, fp16 = 1 };

// Kernel arguments (passed by value as a __grid_constant__ parameter, so the tensor maps live in
// parameter space where TMA can read them).
struct Fa3Args {
  CUtensorMap tma_q;  // q [rows][num_qo_heads][head_dim_qk]: box 128 rows x one head x head_dim_qk
  CUtensorMap tma_k;  // ragged k [rows][num_kv_heads][head_dim_qk]: box block_n rows; paged: one box
  CUtensorMap tma_v;  // (page_maps) of one head, one 128-byte column chunk
  const PrefillWorkItem* items;  // (each item carries its request's rows and lengths)
  const int32_t* page_indices;   // paged only
  const uint8_t* cache;          // paged only: [page][k|v][...]
  int64_t page_stride;           // bytes between pages
  int64_t slot_stride;           // bytes between a page's tokens
  int64_t head_stride;           // bytes between kv heads
  int64_t v_offset;              // bytes from a K row to its V row
  void* out;
  int32_t num_items;
  int32_t num_qo_heads;
  int32_t group;  // num_qo_heads / num_kv_heads
  int32_t page_size;
  FastDivisor page_div;  // page_size (per-row page lookups of the gathers)
  int32_t paged;      // 1: K/V through the page table (TMA per page or cp.async gather)
  int32_t page_maps;  // paged: tma_k / tma_v are page maps of box_rows-key boxes (page_aligned tiles)
  int32_t box_rows;   // page_maps: the largest power of two dividing page_size and block_n
  // Paged, page-aligned 16-bit tiles with boxes of >= 16 rows: V stages are box-major ([box][chunk]
  // [slot][128 B], one k-step of the PV GEMM inside a box), so each box of V is one TMA box of all
  // its chunks (tma_v's box spans them); else V stages are [chunk][row][128 B] like K.
  int32_t v_box_major;
  int32_t causal;
  OutType out_type;
  float scale_log2;  // sm_scale * q_scale * k_scale * log2(e)
  float out_scale;   // v_scale
};

// Launch geometry shared by every instantiation.
struct Fa3Launch {
  int grid;
  bool pdl;
  cudaStream_t stream;
};

// Paged K/V goes by TMA in boxes of at least one 8-row swizzle atom. Boxes of 4 rows (pages of 12
// or 20) land correctly too but ran 1.18x slower than the per-row gather (8 x 2048 causal, head
// 128: 0.79 against 0.68 ms): 64 small boxes a tile cost more than they save.
inline constexpr int kMinBoxRows = 8;

// Encodes the 5-D tensor map of one K or V half of a paged cache: dims (128-byte chunk of E
// elements, slot, kv head, chunk, page), box (E, box_rows, 1, box_chunks, 1): a box lands as
// box_chunks blocks of box_rows swizzled 128-byte rows. Strides in bytes; pages unbounded
// (page-table entries are valid).
[[nodiscard]] cudaError_t encode_page_map(CUtensorMap* map, const void* base, DType dtype, int heads, int head_dim,
                                          int page_size, int box_rows, int box_chunks, int64_t slot_stride,
                                          int64_t head_stride, int64_t page_stride);

// One function per translation unit: the kernels of one head-dim pair for bf16, fp16 and (head dims
// 128 and 256) fp8_e4m3 inputs.
// dtype picks the instantiation; the arguments are complete except tma_k/tma_v (built here with the
// instantiation's block_n when the KV is ragged).
[[nodiscard]] cudaError_t launch_d64(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch);
[[nodiscard]] cudaError_t launch_d128(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch);
[[nodiscard]] cudaError_t launch_d128_wide(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch);
[[nodiscard]] cudaError_t launch_d256(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch);
[[nodiscard]] cudaError_t launch_d256_wide(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch);
[[nodiscard]] cudaError_t launch_d192_128(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch);

// cudaFuncGetAttributes of one fa3 kernel (whether this build has machine code for the device).
[[nodiscard]] cudaError_t probe_kernel_image();

}  // namespace kbench::kernels::prefill_fa3
