// kbench's own GEMM for Hopper (sm_90a, issue 18): D = A B^T with A [rows][k] and B [groups][n][k]
// both k-contiguous, D [rows][n] row-major: e4m3 operands in one of two scalings, bf16 or fp16
// (none), or block-scaled FP4 expanded in the pipeline (block_fp4: both operands; weight_fp4: B):
//   groupwise:  DeepSeek-style fp32 block scales, A 1 x 128 and B 128 x 128, promoted into the fp32
//               accumulators every 128 of k (each 128-deep slice is accumulated by wgmma alone, then
//               added times its two scales);
//   per_tensor: one fp32 scale for all of A and one for each group of B (or one for all of B),
//               applied in the epilogue;
//   none:       bf16 A and B, or fp16 A and B (wgmma's f16 with fp32 accumulation), D = A B^T.
//   block_fp4:  NVFP4 or MXFP4 A and B (packed e2m1 pairs, element 2j in byte j's low nibble; one
//               scale byte per 16 or 32 elements of a row in a quant::SfLayout), D = alpha A B^T:
//               a converter warpgroup expands each k-slice to bf16 (x its block scales, exactly:
//               fp4_expand.hpp) into the stages the bf16 wgmma reads; alpha in the fp32 epilogue.
//   weight_fp4: bf16 or fp16 A (as none) and NVFP4 or MXFP4 B, one matrix per group (an MoE's FP4
//               expert weights), D = group_alpha[g] A B^T: B expanded into A's type as block_fp4
//               expands it (fp16: NVFP4 only, exact), the group's alpha in the fp32 epilogue.
// A's and D's rows are split into groups (contiguous layout: group g owns rows
// [row_offsets[g], row_offsets[g + 1])), group g multiplying B's matrix g: one matrix (groups 1), a
// batch (equal groups) or an MoE grouped GEMM whose group sizes live on the device (graph-safe: no
// host read of them). The kernel: TMA loads, a producer warp and one or two consumer warpgroups of
// wgmma, persistent CTAs taking the units of an L2-banded tile order from a global counter
// (wgmma_gemm_kernel.cuh); where the tiles alone
// leave SMs idle (decode-sized m), split-K: each tile's k-blocks split over several CTAs, their fp32
// partial tiles summed in a fixed order (deterministic) within the same launch. weight_fp4 on groups
// of up to 128 rows runs a second kernel with the operands swapped (fp4_swapped_kernel.cuh: the
// weights on wgmma's M, expanded into its register fragments; wgmma_gemm_swapped_fp4_rows).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kbench/dtype.hpp"
#include "kernels/common/gated_linear_unit.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::gemm::sm90 {

enum class GemmScaling { per_tensor, groupwise, none, block_fp4, weight_fp4 };

// Groups whose sizes are read on the device: at most this many (their offsets and tile counts are
// staged in shared memory).
inline constexpr int kMaxDeviceGroups = 512;

struct WgmmaGemmParams {
  GemmScaling scaling = GemmScaling::groupwise;
  int groups = 1;
  // Rows of every group where all are equal (group g starts at row g * rows_per_group), or 0: the
  // groups' offsets are `row_offsets` on the device (int32 [groups + 1], non-decreasing, the last at
  // most `rows`).
  int64_t rows_per_group = 0;
  const int32_t* row_offsets = nullptr;
  int64_t rows = 0;  // rows of A and D (all groups)
  int64_t n = 0;
  int64_t k = 0;     // a multiple of 128 (groupwise, FP4); rows of 16-byte multiples (TMA)
  // A's and B's elements: fp8_e4m3 (per_tensor, groupwise), bfloat16 or float16 (none: A and B
  // alike), uint8 (block_fp4: e2m1 code pairs) or bfloat16 / float16 A and uint8 B (weight_fp4).
  const void* a = nullptr;
  DType a_dtype = DType::fp8_e4m3;
  const void* b = nullptr;
  DType b_dtype = DType::fp8_e4m3;
  void* d = nullptr;
  DType d_dtype = DType::bfloat16;  // bfloat16 or float16
  // per_tensor: device pointers to A's one dequantization scale and B's: group g's at
  // b_scale[g * b_scale_group_stride] (an MoE's per-expert FP8 weight scales), or with stride 0 one
  // for all groups. A's rows mix the groups' tokens in one quantized tensor: one scale.
  // groupwise: A's scale of (row, k-block) at a_scale[row * a_scale_row_stride + kb * a_scale_k_stride];
  // B's of (group, n-block, k-block) at b_scale[g * b_scale_group_stride + nb * b_scale_n_stride +
  // kb * b_scale_k_stride] (n-blocks of 128: the last may be partial).
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  int64_t a_scale_row_stride = 0;
  int64_t a_scale_k_stride = 0;
  int64_t b_scale_group_stride = 0;
  int64_t b_scale_n_stride = 0;
  int64_t b_scale_k_stride = 0;
  // block_fp4 (one group) and weight_fp4 (B only, any groups), n a multiple of 128: the format
  // (nvfp4: e4m3 scales of 16 elements; mxfp4: ue8m0 of 32), A's scale bytes over its rows
  // (block_fp4) and B's over its n rows, each in its layout with k / block scale columns, and
  // block_fp4's alpha (NVFP4's 1 / (global scale A x global scale B); weight_fp4: 1).
  quant::BlockFormat fp4_format = quant::BlockFormat::nvfp4;
  const uint8_t* a_block_scales = nullptr;
  const uint8_t* b_block_scales = nullptr;
  quant::SfLayout a_sf_layout = quant::SfLayout::swizzled_128x4;
  quant::SfLayout b_sf_layout = quant::SfLayout::swizzled_128x4;
  float alpha = 1.0f;
  // weight_fp4: group g's B scale bytes start b_sf_group_stride bytes after group 0's (each expert
  // its own layout; 0: one set for all groups), and D's rows of group g are multiplied by
  // group_alpha[g] (device fp32 [groups], read by the kernel, so an MoE can fold each expert's
  // NVFP4 global scales into it on the device; nullptr: 1).
  int64_t b_sf_group_stride = 0;
  const float* group_alpha = nullptr;
  // groupwise, n a multiple of 256: instead of D (d unused), the epilogue writes a gated linear unit
  // of D's two halves (an MoE's FC1 with its activation fused): B's rows [0, n/2) give the up half,
  // [n/2, n) the gate half, act = glu(up, gate) [rows][n/2] from the fp32 accumulators, in DeepSeek
  // FP8 1x128 blocks (groupwise_fp8.hpp's rules): e4m3 codes to glu_codes, scales K-major
  // [row][n/2/128] to glu_scales. Runs on 128 x 256 tiles (each its 128 up and 128 gate columns).
  std::optional<GatedLinearUnit> glu;
  void* glu_codes = nullptr;
  float* glu_scales = nullptr;
  bool enable_pdl = false;
};

// Why the kernel cannot take a problem of these dtypes and sizes, or nullopt (pointers unexamined:
// the constructor checks them).
[[nodiscard]] std::optional<std::string> wgmma_gemm_unsupported(const WgmmaGemmParams& params);

// Concurrent streams of B (one CTA's k-split of one B panel each) that reach the H100's HBM rate at
// decode-sized m: a CTA streams B at ~55 GB/s, so B's 56 panels of n 7168 need no split (unsplit
// 45.7 us against 48.3 with 2 splits, m 64, k 16384) and n 2112's 17 panels are best in 3 splits
// (12.9 us against 14.2 with 7 and 14.5 with 2; bench/results/h100/gemm/session15/split_sweep/).
inline constexpr int64_t kSplitKBStreams = 48;

// The HBM bandwidth kSplitKBStreams was measured at: an H100 SXM's (2619 MHz x 5120 bits, double
// data rate), bytes/s.
inline constexpr double kSplitKReferenceBandwidth = 2.0 * 2619e6 * 5120 / 8;

// The streams of B wanted on a GPU whose HBM moves `bandwidth` bytes/s: kSplitKBStreams scaled by
// its bandwidth against the H100's, at least 1. A faster memory needs more CTAs streaming: on an
// H200 (4.81 TB/s: 69 streams) m 64 x n 7168 x k 16384 groupwise runs in 38 us in 2 splits against
// 56 unsplit, n 2112 in 12.4 us in 5 against 14.5 in 3 (bench/results/h200/gemm/session32/call8/).
// Pure.
[[nodiscard]] int64_t wgmma_gemm_b_streams(double bandwidth);

// wgmma_gemm_b_streams of the current device's HBM (its memory clock and bus width, queried once per
// device); kSplitKBStreams where the query fails.
[[nodiscard]] int64_t wgmma_gemm_device_b_streams();

// The split heuristic's k-splits per tile for `tiles` output tiles over `b_panels` distinct panels of
// B (groups x n-blocks), each of `k_blocks` k-slices (128 bytes of k), on `sm_count` SMs wanting
// `streams` streams of B: 1 where the tiles give every SM one or B's panels alone make that many
// streams; otherwise the fewest splits that make them, capped at one wave of units (tiles x splits
// <= SMs) and one k-slice a split. Pure: the plan's heuristic, testable on the host.
[[nodiscard]] int wgmma_gemm_k_splits(int64_t b_panels, int64_t tiles, int64_t k_blocks, int sm_count,
                                      int64_t streams = kSplitKBStreams);

struct WgmmaTileShape {
  int block_m;
  int block_n;
};

// The tile heuristic's shape for `params` on sm_count SMs: the largest tiles that give every SM one
// (groupwise: 128 x 256, 128 x 128, 64 x 128; the others 128 x 256, 64 x 128); where none does, the
// smallest, or a tile as wide with more rows where those rows are not padding and its tiles give
// at least a quarter of the SMs one (B read once for all rows); groups of 64 rows or fewer (device
// groups: on average) take the smallest. Pure: the plan's heuristic without
// KBENCH_WGMMA_GEMM_TILES, testable on the host.
[[nodiscard]] WgmmaTileShape wgmma_gemm_tile_shape(const WgmmaGemmParams& params, int sm_count);

// The rows of A a unit with which the plan runs weight_fp4 on the swapped FP4 kernel
// (fp4_swapped_kernel.cuh: the weights' rows on wgmma's M, the groups' rows on N, each consumer
// thread expanding its weight rows' codes into registers), or 0 (the tiled kernel): where it can (B's
// scales swizzled_128x4, k a multiple of 256), 16 where the groups hold 16 rows or fewer (equal
// groups; device groups on average: an MoE's FP4 experts at decode), 64 where they hold up to 128.
// Pure: the plan's heuristic without KBENCH_WGMMA_GEMM_TILES (which forces 16 with "swapped", 64 with
// "swapped64" where it can run, the tiled kernel with a tile's name), testable on the host.
[[nodiscard]] int wgmma_gemm_swapped_fp4_rows(const WgmmaGemmParams& params);

// Whether the swapped FP4 kernel can run `params` at all (weight_fp4, B's scales swizzled_128x4 in
// 16-byte multiples a group, k a multiple of 256), whatever the groups' rows. Pure.
[[nodiscard]] bool wgmma_gemm_can_swap_fp4(const WgmmaGemmParams& params);

// The cluster heuristic's CTAs a cluster (1 or 2) for `params` in block_m x block_n tiles split
// k_splits ways. Clusters of 2 CTAs on adjacent m-blocks share B's slices by TMA multicast (a third
// less L2 traffic a 128 x 256 tile): taken where the tiles are 128 x 256 (block_n 256), unsplit (a
// split's partial tile is a CTA's) and not FP4 (its raw stages are released by the converter alone),
// and the groups have an even count of m-blocks each or at least 8 (device groups: on average), so
// that the pairs' padding is at most 1/9 of the tiles (an MoE's experts at decode, a few m-blocks
// each, stay unpaired). Pure: the plan's heuristic, testable on the host.
[[nodiscard]] int wgmma_gemm_cluster(const WgmmaGemmParams& params, int block_m, int block_n, int k_splits);

// A planned GEMM: the tensor maps, launch shape and split-K workspace made once (outside timing and
// stream capture); run() is one kernel launch, no allocation, no host synchronisation (capturable
// in a CUDA graph). The tile scheduler's counters and split-K's workspace belong to the plan (and
// its copies): their runs must be ordered (one stream), never concurrent.
class WgmmaGemm {
 public:
  // Throws std::runtime_error where wgmma_gemm_unsupported says why, a tensor map cannot be made or
  // the workspace cannot be allocated.
  explicit WgmmaGemm(const WgmmaGemmParams& params);
  [[nodiscard]] cudaError_t run(cudaStream_t stream) const;
  // The plan's k-splits per tile (1: no split-K) and its workspace's bytes (0 without split-K).
  [[nodiscard]] int k_splits() const;
  // The plan's CTAs a cluster (wgmma_gemm_cluster, or KBENCH_WGMMA_GEMM_CLUSTER=1|2 where clusters
  // are possible).
  [[nodiscard]] int cluster() const;
  [[nodiscard]] std::size_t workspace_bytes() const;
  // Whether the plan runs the swapped FP4 kernel (wgmma_gemm_swapped_fp4_rows).
  [[nodiscard]] bool swapped_fp4() const;

  struct Plan;  // wgmma_gemm_launch.cu

 private:
  std::shared_ptr<const Plan> plan_;
};

// Whether this build holds the sm_90a kernel (else run() would trap: the backend says why instead).
[[nodiscard]] bool wgmma_gemm_built_for_sm90a();

}  // namespace kbench::kernels::gemm::sm90
