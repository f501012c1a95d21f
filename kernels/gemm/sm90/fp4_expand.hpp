// The FP4 operand mode of kbench's wgmma GEMM (GemmScaling::block_fp4): how packed e2m1 codes and
// their block scales become bf16 operand values. Host and device (the CPU tests check it
// exhaustively; the kernel's converter warpgroup runs it, wgmma_gemm_kernel.cuh).
//
// Exactness: an operand value is e2m1 x scale x 2^-kFp4OperandExponent, which bf16 holds exactly
// wherever it is a bf16 normal: e2m1 has 2 significant bits, e4m3 (NVFP4) at most 4 and ue8m0
// (MXFP4) 1, so a product has at most 6 of bf16's 8. The expansion places an e2m1 code's bits in
// bf16 (value e2m1 x 2^-126: 0.5 is a bf16 subnormal, the rest normals) and multiplies by the
// block's scale x 2^94 in bf16 (one mul.rn.bf16x2 per pair, subnormals kept), so:
//   NVFP4: every finite e4m3 scale (2^-9 .. 448): factors 2^85 .. 2^102.8, operands 2^-42 .. 2^-20.6
//          times their 2^32: exact, always.
//   MXFP4: ue8m0 codes 34 .. 160 (scales 2^-93 .. 2^33, blocks of amax about 2^-91 .. 2^35): exact;
//          below, operands fall into bf16 subnormals (rounded); above, the factor overflows (inf).
// kFp4OperandExponent = 32 centres that window on real data's scales while A x B's products (scaled
// 2^-64) stay fp32 normals down to true products of 2^-62; the epilogue multiplies by 2^64 x alpha.
//
// Order of k: expand_fp4_word turns 8 consecutive codes (one 32-bit word, element 2j in byte j's
// low nibble) into 4 bf16 pairs, pair s = (element s, element s + 4). The pairs go to the word's
// 16-byte chunk in order, so each chunk holds its 8 elements permuted (0 4 1 5 2 6 3 7); A and B are
// expanded alike, so every product of the dot product meets its partner: D is unchanged.
#pragma once

#include <cstdint>

#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::gemm::sm90 {

inline constexpr int kFp4OperandExponent = 32;

// Elements of one 128-byte bf16 row (one k-slice of the pipeline) and its FP4 source bytes.
inline constexpr int kFp4SliceElements = 64;
inline constexpr int kFp4SliceBytes = kFp4SliceElements / 2;

// bf16x2 bits of pair s (0..3) of word q: element s in the low half, element s + 4 in the high half,
// each e2m1 x 2^-126 (magnitude bits eem at bf16 bits 8..6, the sign at 15). A pair's two nibbles
// are moved together: masked to bits 0..3 and 16..19 (or 4..7 and 20..23), multiplied by 2^6 + 2^12
// (or 2^2 + 2^8; the two shifted copies do not overlap, so the product is their OR), and the
// magnitude taken from the first copy, the sign from the second.
KBENCH_QUANT_HOST_DEVICE uint32_t fp4_pair_bits(uint32_t q, int s) {
  constexpr uint32_t kKeep = 0x81C081C0u;  // bits 15, 8..6 of each half
  const uint32_t word = s < 2 ? q : q >> 8;
  return s % 2 == 0 ? ((word & 0x000F000Fu) * 0x1040u) & kKeep : ((word & 0x00F000F0u) * 0x0104u) & kKeep;
}

// bf16 bits of scale x 2^(126 - kFp4OperandExponent) for a scale byte of `format` (nvfp4: e4m3,
// mxfp4: ue8m0). Exact where representable (see above); the float's top half is the bf16.
KBENCH_QUANT_HOST_DEVICE uint32_t fp4_scale_bf16(quant::BlockFormat format, uint8_t code) {
  const float scale = format == quant::BlockFormat::nvfp4 ? quant::e4m3_to_float(code) : quant::ue8m0_to_float(code);
  return quant::float_bits(scale * 0x1p94f) >> 16;
}
static_assert(126 - kFp4OperandExponent == 94, "fp4_scale_bf16's factor");

// Where k-slice `slice` (kFp4SliceElements of k) of row `row` keeps its scales in a scale-factor
// layout of `columns` scale columns: the 4-byte aligned group of scale columns that holds them (an
// NVFP4 slice's 4 blocks are one group; an MXFP4 slice's 2 blocks half of one). A row part
// (quant::sf_row_offset) plus the slice's part, the same for every row: the kernel computes each
// row's part once per tile.
template <class Index = int64_t>
KBENCH_QUANT_HOST_DEVICE Index fp4_slice_scale_column_offset(quant::SfLayout layout, quant::BlockFormat format,
                                                             Index slice) {
  const Index first = format == quant::BlockFormat::nvfp4 ? 4 * slice : 2 * slice;
  return quant::sf_column_offset<Index>(layout, first & ~Index{3});
}

template <class Index = int64_t>
KBENCH_QUANT_HOST_DEVICE Index fp4_slice_scale_offset(quant::SfLayout layout, quant::BlockFormat format, Index row,
                                                      Index slice, Index columns) {
  return quant::sf_row_offset<Index>(layout, row, columns) + fp4_slice_scale_column_offset<Index>(layout, format, slice);
}

// The byte of that group holding the scale of the slice's 16-element block c (0..3).
KBENCH_QUANT_HOST_DEVICE int fp4_slice_scale_byte(quant::BlockFormat format, int64_t slice, int c) {
  return format == quant::BlockFormat::nvfp4 ? c : 2 * static_cast<int>(slice % 2) + c / 2;
}

}  // namespace kbench::kernels::gemm::sm90
