// The parameters of kbench's sm_90a GEMM kernels (wgmma_gemm_kernel.cuh, fp4_swapped_kernel.cuh),
// filled by the plan (wgmma_gemm_launch.cu).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/common/gated_linear_unit.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::gemm::sm90 {

// The kernels' parameters (tensor maps first: 64-byte aligned). The swapped FP4 kernel reads the
// boxes it needs from its maps (A 128 bytes x 16 or 64 rows, B's codes 128 bytes x 256 rows, both
// 128-byte swizzled) and k_blocks as its 256-deep stages; the fields of tiles, splits, clusters and
// the GLU stay unused there.
struct WgmmaGemmArgs {
  CUtensorMap tma_a;  // A [rows][k] bytes, box 128 x a_box_rows, 128-byte swizzle (block_fp4: 32, 32-byte)
  CUtensorMap tma_b;  // B [groups][n][k] bytes, box 128 x kBlockN x 1 (FP4 codes: 32, 32-byte swizzle)
  int groups;
  int rows_per_group;  // > 0: equal groups; 0: row_offsets on the device
  const int32_t* row_offsets;
  int rows;
  int n;
  int k_blocks;
  int n_blocks;
  int a_box_rows;  // rows A's TMA box loads (fewer than kBlockM where every group is shorter)
  int k_splits;    // splits of each tile's k-blocks (1: no split-K), each at least one k-block
  // CTAs a cluster (1 or 2; 2 with k_splits 1 only, not FP4): a cluster's CTAs take adjacent m-blocks
  // of one group and the same columns, each loads half of B's slice and multicasts it to both.
  int cluster;
  // k_splits > 1: the units' fp32 tiles (tile t's split s in slot t * k_splits + s, kBlockM x kBlockN
  // floats each) and each tile's count of splits done (zero at launch; the last split resets it).
  float* partials;
  int* tile_arrivals;
  // The dynamic scheduler's counters: units handed out past the first wave, and CTAs done taking
  // (zero at launch; the last CTA to finish resets both).
  int* unit_counter;
  void* d;
  bool d_bf16;
  const float* a_scale;
  const float* b_scale;
  int64_t a_scale_row_stride;
  int64_t a_scale_k_stride;
  int64_t b_scale_group_stride;
  int64_t b_scale_n_stride;
  int64_t b_scale_k_stride;
  // block_fp4 and weight_fp4 (WgmmaGemmParams): scale bytes (B's of group g b_sf_group_stride
  // bytes after group 0's), their layouts and scale columns (k / block), alpha (block_fp4) and
  // group_alpha (weight_fp4).
  const uint8_t* a_block_scales;
  const uint8_t* b_block_scales;
  int64_t b_sf_group_stride;
  quant::SfLayout a_sf_layout;
  quant::SfLayout b_sf_layout;
  quant::BlockFormat fp4_format;
  uint32_t sf_columns;
  float alpha;
  const float* group_alpha;
  // The GLU epilogue (WgmmaGemmParams::glu): its unit, act's codes [rows][glu_columns] and 1x128
  // scales [rows][glu_columns / 128], glu_columns = n / 2.
  bool glu_epilogue;
  GatedLinearUnit glu;
  uint8_t* glu_codes;
  float* glu_scales;
  int glu_columns;
};

}  // namespace kbench::kernels::gemm::sm90
