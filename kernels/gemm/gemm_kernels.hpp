// The GEMM family's device work other than the GEMMs themselves (issue 18): building the operands as
// the reference builds them (per-tensor FP8 for bmm_fp8 / mm_fp8, groupwise FP8 for the
// *_fp8_nt_groupwise routines) and the refcheck's reference, an fp32-accumulating GEMM that is
// correct rather than fast. Plain structs and launch functions; no harness header.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kbench/dtype.hpp"
#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::gemm {

// Per-tensor FP8, as the reference's to_float8 does it on a bfloat16 tensor: amax over the whole
// tensor (at least 1e-12), scale = bf16(fmax / amax), q = fp8(bf16(x * scale)) saturated to +-fmax,
// and the dequantization scale 1 / scale in fp32 (what the GEMM receives). `amax` is one float of
// scratch; `dequant_scale` receives the one fp32 scale.
[[nodiscard]] cudaError_t quantize_per_tensor(const void* bf16_input, int64_t count, DType fp8_format, float* amax,
                                              uint8_t* output, float* dequant_scale, cudaStream_t stream);

// amax = the largest magnitude of `count` bfloat16 values (mm_fp4's global scales, 2688 / amax).
[[nodiscard]] cudaError_t amax_bfloat16(const void* bf16_input, int64_t count, float* amax, cudaStream_t stream);

// Groupwise FP8 (groupwise_fp8.hpp's rules) of `groups` matrices of rows x k fp32 values, in blocks
// of block_rows x tile (1 x tile for A, tile x tile for B; k a multiple of tile, the last block row
// partial where block_rows does not divide rows): e4m3 bytes [groups][rows][k] and the
// scale_blocks(rows, block_rows) x k / tile block scales in `major`'s layout, each group's after the
// previous one's. For A pass groups = 1 and all rows: its scale layout spans the groups' rows (the
// reference's a_scale (k/t, G*m)).
struct GroupwiseQuantizeParams {
  const float* input = nullptr;
  uint8_t* output = nullptr;
  float* scales = nullptr;
  int64_t groups = 1;
  int64_t rows = 0;
  int64_t k = 0;
  int64_t tile = 128;
  int64_t block_rows = 1;
  ScaleMajor major = ScaleMajor::mn;
};
[[nodiscard]] cudaError_t quantize_groupwise(const GroupwiseQuantizeParams& params, cudaStream_t stream);

// One operand of the reference GEMM: `batches` matrices of rows x k elements, k contiguous (row i
// of batch b at data + b * batch_stride + i * k). Its value is the element times, if given, the
// per-tensor scale, or the block scale of its groupwise layout.
struct ReferenceOperand {
  const void* data = nullptr;
  DType dtype = DType::bfloat16;
  int64_t batch_stride = 0;          // elements
  const float* tensor_scale = nullptr;
  // Groupwise: the scale of (batch b, row i, k-block kb) is at
  //   b * scale_batch_stride + offset(major, scale_block_rows, k / tile, (b * scale_batch_rows + i) / block_rows, kb).
  // A of a group GEMM is one layout over all groups' rows (scale_batch_rows = m); B has one layout
  // per group (scale_batch_stride).
  const float* block_scales = nullptr;
  int64_t block_rows = 1;          // 1 (A) or tile (B)
  int64_t scale_block_rows = 0;    // block rows one layout spans (B: scale_blocks(n, tile))
  int64_t scale_batch_stride = 0;  // floats
  int64_t scale_batch_rows = 0;
  // Block-scaled FP4 (dtype uint8, one matrix): packed e2m1 pairs (element 2j in byte j's low
  // nibble), the scale of (row i, block c) at sf_offset(sf_layout, i, c, sf_columns), each element
  // dequantized as block_formats.hpp's dequantize_element (NVFP4: divided by global_scale).
  const uint8_t* fp4_scales = nullptr;
  quant::BlockFormat fp4_format = quant::BlockFormat::nvfp4;
  quant::SfLayout sf_layout = quant::SfLayout::swizzled_128x4;
  int64_t sf_columns = 0;
  float global_scale = 1.0f;
};

// D[b][i][j] = sum over k of A[b][i][k] * B[b][j][k] (+ bias[j]) accumulated in fp32, rounded to
// out_dtype and stored as fp32 [batches][m][n]. Groupwise operands share `tile` and `major`.
struct ReferenceGemmParams {
  int64_t batches = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  ReferenceOperand a;
  ReferenceOperand b;
  int64_t tile = 128;
  ScaleMajor major = ScaleMajor::mn;
  const void* bias = nullptr;  // bfloat16 [n], or null
  DType out_dtype = DType::bfloat16;
  float* out = nullptr;
};
[[nodiscard]] cudaError_t reference_gemm(const ReferenceGemmParams& params, cudaStream_t stream);

}  // namespace kbench::kernels::gemm
