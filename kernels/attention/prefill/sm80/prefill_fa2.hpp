// The fa2 prefill kernel's host-visible pieces, shared by its dispatch (prefill_fa2_launch.cu) and
// its translation units (prefill_fa2_<dtype>_<dims>.cu): the kernel arguments, the tile shape of
// each head-dim configuration and the per-configuration launch functions. The kernel itself is in
// prefill_fa2.cuh.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/attention/prefill/prefill.hpp"

namespace kbench::kernels::prefill_fa2 {

// Kernel arguments (by value). K/V rows are found through a "row index" and a slot: ragged KV has
// row index = token (kv_indptr[b] + t), slot 0; paged KV has row index = page
// (page_indices[kv_indptr[b] + t / page_size]), slot = t % page_size. Byte offsets:
//   K row of token t, kv head h = k + row * k_row_stride + slot * slot_stride + h * k_head_stride
//   V row likewise with v, v_row_stride, v_head_stride.
struct Fa2Args {
  const uint8_t* q = nullptr;       // [tokens][num_qo_heads][head_dim_qk]
  uint8_t* out = nullptr;           // [tokens][num_qo_heads][head_dim_vo]
  const int32_t* qo_indptr = nullptr;
  const uint8_t* k = nullptr;
  const uint8_t* v = nullptr;
  const int32_t* kv_indptr = nullptr;      // ragged: token offsets; paged: page offsets
  const int32_t* page_indices = nullptr;   // paged only
  const int32_t* last_page_len = nullptr;  // paged only
  const PrefillWorkItem* items = nullptr;
  int64_t k_row_stride = 0;
  int64_t v_row_stride = 0;
  int64_t slot_stride = 0;  // paged: bytes between the slots of a page (K and V alike)
  int64_t k_head_stride = 0;
  int64_t v_head_stride = 0;
  int page_size = 1;
  int num_qo_heads = 0;
  int group = 1;            // query heads per kv head
  int paged = 0;
  int causal = 0;
  int out_f16 = 0;          // out dtype: fp16 (1) or bf16 (0)
  float scale_log2 = 0.0f;  // sm_scale * q_scale * k_scale * log2(e)
  float v_scale = 1.0f;
};

// A CTA's tile: kWarps warps of kMFrags x 16 query rows each (block_m = 16 kMFrags kWarps rows of
// one query head), KV tiles of kBlockN tokens in a kStages-deep cp.async ring; kQInRegs keeps the
// Q fragments in registers for the whole KV loop, otherwise they are re-read from shared memory
// (ldmatrix) at every KV tile. kMinBlocks: CTAs per SM the registers must allow.
template <int kHeadDimQk_, int kHeadDimVo_, int kWarps_, int kMFrags_, int kBlockN_, int kStages_, bool kQInRegs_,
          int kMinBlocks_>
struct Fa2Tile {
  static constexpr int kHeadDimQk = kHeadDimQk_;
  static constexpr int kHeadDimVo = kHeadDimVo_;
  static constexpr int kWarps = kWarps_;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kMFrags = kMFrags_;
  static constexpr int kBlockM = 16 * kMFrags * kWarps;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kStages = kStages_;
  static constexpr bool kQInRegs = kQInRegs_;
  static constexpr int kMinBlocks = kMinBlocks_;

  // Shared memory: Q [kBlockM][d_qk] (later the output staging), the K/V ring, per stage the K and
  // V byte offsets of the tile's rows (int64 each), per warp where its output rows go. Rows of
  // 16-bit elements, 16-byte chunks XOR-swizzled by the row (chunk ^ (row & 7)); every row is a
  // multiple of 128 bytes.
  static constexpr int kQRowBytes = 2 * kHeadDimQk;
  static constexpr int kKRowBytes = 2 * kHeadDimQk;
  static constexpr int kVRowBytes = 2 * kHeadDimVo;
  static constexpr int kKTileBytes = kBlockN * kKRowBytes;
  static constexpr int kStageBytes = kKTileBytes + kBlockN * kVRowBytes;
  static constexpr int kQOffset = 0;
  static constexpr int kStageOffset = kBlockM * kQRowBytes;
  static constexpr int kDescOffset = kStageOffset + kStages * kStageBytes;
  static constexpr int kWarpOutOffset = kDescOffset + kStages * kBlockN * 16;
  static constexpr int kSmemBytes = kWarpOutOffset + kWarps * 16;

  static_assert(kHeadDimQk % 64 == 0 && kHeadDimVo % 64 == 0 && kHeadDimVo <= kHeadDimQk,
                "rows of whole 128-byte swizzle groups; the output is staged in the Q rows");
  static_assert(kBlockN % 16 == 0 && kBlockN <= kThreads, "one descriptor thread per KV row");
  static_assert(kStages >= 2, "at least double buffering");
  static_assert(kBlockM % (kThreads / 8) == 0 && kBlockN % (kThreads / 8) == 0,
                "the loaders cover whole tiles in passes of kThreads / 8 rows");
};

// The tile each head-dim configuration runs, the fastest of those measured on an H100 that keep
// 0 spills and fit an A100's 163 KB of shared memory. Two m fragments (32 rows) per warp: every
// K / V fragment loaded by ldmatrix feeds two MMAs (with 16 rows per warp the shared-memory reads,
// 256 bytes per m16n8k16, bound the kernel below the tensor pipe); Q fragments do not fit in
// registers beside the 32-row O accumulators, so they are re-read per KV tile. d256 keeps 16 rows
// per warp (O is already 128 registers) and its Q fragments in registers. Smem / CTAs per H100 SM
// / registers: d64 84 KB / 2 / 255, d128 98 KB / 2 / 255, d256 129 KB / 1 / 255,
// d192/128 89 KB / 2 / 241.
template <int kHeadDimQk, int kHeadDimVo>
struct Fa2TileFor;
template <>
struct Fa2TileFor<64, 64> {
  using type = Fa2Tile<64, 64, 4, 2, 128, 2, false, 2>;
};
template <>
struct Fa2TileFor<128, 128> {
  using type = Fa2Tile<128, 128, 4, 2, 64, 2, false, 2>;
};
template <>
struct Fa2TileFor<256, 256> {
  using type = Fa2Tile<256, 256, 8, 1, 32, 2, true, 1>;
};
template <>
struct Fa2TileFor<192, 128> {
  using type = Fa2Tile<192, 128, 4, 2, 32, 2, false, 2>;
};

// The kernel arguments of a launch: K/V strides of the ragged or paged layout, folded scales.
// cudaErrorInvalidValue when a pointer the layout needs is null or q, out, K/V are not 16-byte
// aligned (16-byte cp.async and stores).
[[nodiscard]] cudaError_t make_args(const PrefillParams& params, const PrefillWorkspace& workspace, Fa2Args* args);

// One per translation unit prefill_fa2_<dtype>_<dims>.cu (kF16: fp16 q/k/v, else bf16).
template <bool kF16, int kHeadDimQk, int kHeadDimVo>
[[nodiscard]] cudaError_t launch_head_dims(const Fa2Args& args, int num_items, bool pdl, cudaStream_t stream);

// cudaFuncGetAttributes of one kernel (prefill_fa2_bf16_d128.cu): whether this device has an image.
[[nodiscard]] cudaError_t probe_kernel_image(cudaFuncAttributes* attributes);

}  // namespace kbench::kernels::prefill_fa2
