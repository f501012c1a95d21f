// The FP4 operand modes of kbench's wgmma GEMM (GemmScaling::block_fp4: A and B; weight_fp4: B):
// how packed e2m1 codes and their block scales become 16-bit operand values, bf16 or (weight_fp4
// with fp16 A) fp16. Host and device (the CPU tests check it exhaustively; in the kernel the
// converter warpgroup expands B with it and, block_fp4, the consumers A: wgmma_gemm_kernel.cuh).
//
// Exactness, bf16: an operand value is e2m1 x scale x 2^-32, which bf16 holds exactly wherever it
// is a bf16 normal: e2m1 has 2 significant bits, e4m3 (NVFP4) at most 4 and ue8m0 (MXFP4) 1, so a
// product has at most 6 of bf16's 8. The expansion places an e2m1 code's bits in bf16 (value
// e2m1 x 2^-126: 0.5 is a bf16 subnormal, the rest normals) and multiplies by the block's
// scale x 2^94 in bf16 (one mul.rn.bf16x2 per pair, subnormals kept), so:
//   NVFP4: every finite e4m3 scale (2^-9 .. 448): factors 2^85 .. 2^102.8, operands 2^-42 .. 2^-20.6
//          times their 2^32: exact, always.
//   MXFP4: ue8m0 codes 34 .. 160 (scales 2^-93 .. 2^33, blocks of amax about 2^-91 .. 2^35): exact;
//          below, operands fall into bf16 subnormals (rounded); above, the factor overflows (inf).
// The exponent 32 centres that window on real data's scales while A x B's products (block_fp4:
// scaled 2^-64) stay fp32 normals down to true products of 2^-62; the epilogue multiplies by 2^32
// per expanded operand.
// Exactness, fp16 (NVFP4 only): the e2m1 code's bits placed in fp16 (value e2m1 x 2^-14: 0.5 is a
// subnormal) times the e4m3 scale itself (fp16 holds every e4m3 value as a normal), one
// mul.rn.f16x2 per pair: operands e2m1 x scale x 2^-14 of at most 6 significant bits, from 2^-24
// (0.5 x 2^-9 x 2^-14, fp16's least subnormal) to 6 x 448 x 2^-14: exact, always (where e2m1 x
// scale is below 1, a block of scale below 2, as fp16 subnormals, which wgmma multiplies as they
// are); the epilogue multiplies by 2^14. MXFP4's ue8m0 scales (2^-127 .. 2^127) leave fp16's range:
// not taken.
//
// Order of k: a slice row's 64 codes are 8 words (word w: elements 8w..8w+7, element 2i in byte i's
// low nibble; the 16-element block c is words 2c and 2c + 1). fp4_pair_bits turns pair s of a word
// (elements s and s + 4) into a 16-bit pair, the cheapest to extract.
// block_fp4: the operand row in wgmma's k order is 8 chunks of 4 pairs (a 16-byte chunk of B's
// swizzled bf16 row, or one register of a k-step's A fragment): slot c of chunk j holds pair j % 4
// of word fp4_chunk_word(j, c) = 2c + j / 4, so slot c is always of block c. A whole block then lies
// in the A fragment of the wgmma lanes with lane % 4 == c (slots c of every chunk): a consumer thread
// expands its 2 rows' block c alone, into registers. A and B are permuted alike, so every product of
// the dot product meets its partner: D is unchanged.
// weight_fp4: A is loaded as it lies (TMA), so B's pairs are regrouped into k order (0 1) (2 3) ..
// (fp4_pairs_in_order: one byte permute a pair).
#pragma once

#include <cstdint>

#include "kbench/dtype.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::gemm::sm90 {

// The expanded operand's value is e2m1 x scale x 2^-kFp4OperandExponent<its type> (see above).
template <DType kOperand>
inline constexpr int kFp4OperandExponent = kOperand == DType::bfloat16 ? 32 : 14;

// What the epilogue multiplies by for each expanded operand: 2^kFp4OperandExponent.
template <DType kOperand>
constexpr float fp4_operand_unscale() {
  return static_cast<float>(uint64_t{1} << kFp4OperandExponent<kOperand>);
}

// Elements of one 128-byte 16-bit row (one k-slice of the pipeline) and its FP4 source bytes.
inline constexpr int kFp4SliceElements = 64;
inline constexpr int kFp4SliceBytes = kFp4SliceElements / 2;

// 16-bit pair bits of pair s (0..3) of word q: element s in the low half, element s + 4 in the high
// half, each e2m1 x 2^-126 in bf16 (magnitude bits eem at bits 8..6, the sign at 15) or e2m1 x 2^-14
// in fp16 (eem at bits 11..9, the sign at 15).
// bf16: a pair's two nibbles are moved together: masked to bits 0..3 and 16..19 (or 4..7 and
// 20..23), multiplied by 2^6 + 2^12 (or 2^2 + 2^8; the two shifted copies do not overlap, so the
// product is their OR), and the magnitude taken from the first copy, the sign from the second.
// fp16: the copies would be 3 bits apart and overlap, so two shifts and masks instead.
template <DType kOperand>
KBENCH_QUANT_HOST_DEVICE uint32_t fp4_pair_bits(uint32_t q, int s) {
  static_assert(kOperand == DType::bfloat16 || kOperand == DType::float16, "FP4 expands to bf16 or fp16");
  const uint32_t word = s < 2 ? q : q >> 8;
  if constexpr (kOperand == DType::bfloat16) {
    constexpr uint32_t kKeep = 0x81C081C0u;  // bits 15, 8..6 of each half
    return s % 2 == 0 ? ((word & 0x000F000Fu) * 0x1040u) & kKeep : ((word & 0x00F000F0u) * 0x0104u) & kKeep;
  } else {
    const uint32_t nibbles = s % 2 == 0 ? word : word >> 4;  // the pair's at bits 0..3 and 16..19
    return ((nibbles << 9) & 0x0E000E00u) | ((nibbles << 12) & 0x80008000u);
  }
}

// block_fp4: the word (0..7) whose pair chunk % 4 fills slot `slot` (0..3) of chunk `chunk` (0..7).
KBENCH_QUANT_HOST_DEVICE constexpr int fp4_chunk_word(int chunk, int slot) { return 2 * slot + chunk / 4; }

// A word's 4 pairs (s, s + 4) regrouped into k order: (0 1) (2 3) (4 5) (6 7).
KBENCH_QUANT_HOST_DEVICE void fp4_pairs_in_order(const uint32_t (&pairs)[4], uint32_t (&out)[4]) {
  out[0] = (pairs[0] & 0xFFFFu) | (pairs[1] << 16);
  out[1] = (pairs[2] & 0xFFFFu) | (pairs[3] << 16);
  out[2] = (pairs[0] >> 16) | (pairs[1] & 0xFFFF0000u);
  out[3] = (pairs[2] >> 16) | (pairs[3] & 0xFFFF0000u);
}

// fp16 bits of an e4m3 value (every finite one is an fp16 normal or zero): the conversion
// instruction on the device (sm_89 and up), exactly by the bits on the host (NaN: 0x7FFF).
KBENCH_QUANT_HOST_DEVICE uint32_t e4m3_to_fp16_bits(uint8_t code) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return __nv_cvt_fp8_to_halfraw(code, __NV_E4M3).x;
#else
  const float value = quant::e4m3_to_float(code);
  if (value != value) return 0x7FFFu;
  const uint32_t bits = quant::float_bits(value), magnitude = bits & 0x7FFFFFFFu;
  return ((bits >> 16) & 0x8000u) | (magnitude == 0 ? 0u : (magnitude >> 13) - ((127u - 15u) << 10));
#endif
}

// 16-bit bits of the factor a scale byte of kFormat (nvfp4: e4m3, mxfp4: ue8m0) contributes: bf16
// of scale x 2^(126 - 32) (exact where representable, see above; the float's top half is the
// bf16), or fp16 of the e4m3 scale itself (NVFP4 only).
template <DType kOperand, quant::BlockFormat kFormat>
KBENCH_QUANT_HOST_DEVICE uint32_t fp4_scale_bits(uint8_t code) {
  static_assert(126 - kFp4OperandExponent<DType::bfloat16> == 94, "the bf16 factor");
  if constexpr (kOperand == DType::bfloat16 && kFormat == quant::BlockFormat::mxfp4) {
    // 2^(code - 127) x 2^94 by its exponent alone (a few integer instructions where the consumers of
    // the swapped kernel make one a chunk): code + 94 (code 0, 2^-127: 2^-33), inf from code 161, NaN
    // for 255, as the float rule gives (the CPU tests compare every code).
    return code == 0xFF ? 0x7FC0u : (code >= 161 ? 255u : code + 94u) << 7;
  } else if constexpr (kOperand == DType::bfloat16) {
    return quant::float_bits(quant::e4m3_to_float(code) * 0x1p94f) >> 16;
  } else {
    static_assert(kOperand == DType::float16 && kFormat == quant::BlockFormat::nvfp4,
                  "fp16 operands take NVFP4's e4m3 scales only (ue8m0 scales leave fp16's range)");
    static_assert(kFp4OperandExponent<DType::float16> == 14, "fp16 places e2m1 at 2^-14, times the scale itself");
    return e4m3_to_fp16_bits(code);
  }
}

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
