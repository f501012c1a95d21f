// kbench's block quantization kernels (MXFP8, MXFP4, NVFP4; kernels/quantization/block_formats.hpp
// holds the rules): host-side launch API. Knows nothing of the harness.
//
// Input [batches][rows][columns] (bf16 or fp16, contiguous). Every block of `block_size`
// consecutive elements of a row gets one scale byte; output [batches][rows][padded_columns]
// elements (FP4: two per byte, element 2j in the low nibble; MXFP8: one e4m3 byte), columns
// beyond `columns` up to `padded_columns` quantized as zeros. Scales per batch in `layout`
// (sf_bytes(layout, rows, padded_columns / block_size) bytes; padding written as 0).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kbench/dtype.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels {

struct QuantizeParams {
  const void* input = nullptr;
  uint8_t* output = nullptr;
  uint8_t* scales = nullptr;
  // Per-token NVFP4 (batches 1): [rows] fp32 written by the call, per_token_scale of each row's
  // largest magnitude; the row's global scale is its reciprocal. nullptr: `global_scale` for all.
  float* token_scales = nullptr;
  int64_t batches = 1;
  int64_t rows = 0;
  int64_t columns = 0;         // a multiple of block_size
  int64_t padded_columns = 0;  // >= columns, a multiple of block_size
  int block_size = 32;         // 16 or 32 (NVFP4), 32 (MX formats)
  quant::BlockFormat format = quant::BlockFormat::nvfp4;
  quant::SfLayout layout = quant::SfLayout::swizzled_128x4;
  bool shuffle_rows = false;   // --do_shuffle: rows permuted in blocks of 32 (data and scales)
  float global_scale = 1.0f;   // NVFP4 only
  DType in_dtype = DType::bfloat16;
  bool enable_pdl = false;

  [[nodiscard]] KBENCH_QUANT_HOST_DEVICE int64_t scale_columns() const { return padded_columns / block_size; }
  [[nodiscard]] KBENCH_QUANT_HOST_DEVICE int64_t output_row_bytes() const {
    return format == quant::BlockFormat::mxfp8 ? padded_columns : padded_columns / 2;
  }
  [[nodiscard]] KBENCH_QUANT_HOST_DEVICE int64_t scale_bytes_per_batch() const { return quant::sf_bytes(layout, rows, scale_columns()); }
};

// Checks the parameters and launches kbench's kernel(s); cudaErrorInvalidValue for unsupported
// combinations, else the launch status.
[[nodiscard]] cudaError_t launch_quantize(const QuantizeParams& params, cudaStream_t stream);

// cudaSuccess when the kernels have machine code for the current device.
[[nodiscard]] cudaError_t quantize_kernel_available();

}  // namespace kbench::kernels
