// kbench's fused RMSNorm + FP4 block quantization (rmsnorm_fp4quant, add_rmsnorm_fp4quant): host-side
// launch API. Knows nothing of the harness.
//
// For each row r of `rows` rows of `hidden` elements (all tensors contiguous):
//   v = input[r]                       (add variant: v = round(input[r] + residual[r]) to the input
//                                       dtype, stored back to residual[r]; the norm uses the stored v)
//   y = v / sqrt(mean(v^2) + eps) * weight        (fp32, exactly as launch_rmsnorm computes it)
//   y quantized in blocks of 16 (NVFP4) or 32 (MXFP4) consecutive elements by the rules of
//   kernels/quantization/block_formats.hpp (the quantizers' own device functions): codes[r] holds
//   hidden / 2 bytes (element 2j in the low nibble), one scale byte per block in the linear layout
//   ([rows][hidden / block]) and/or the 128x4 layout (padding rows and columns written as 0).
// Only the register path of the RMSNorm kernels: hidden a multiple of the block, at most 32768.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kbench/dtype.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels {

struct RmsNormFp4Params {
  const void* input = nullptr;   // [rows][hidden], in_dtype, 16-byte aligned
  void* residual = nullptr;      // add variant: [rows][hidden], read and written; else nullptr
  const void* weight = nullptr;  // [hidden], in_dtype
  uint8_t* codes = nullptr;      // [rows][hidden / 2]
  uint8_t* scales_linear = nullptr;    // [rows][hidden / block], or nullptr
  uint8_t* scales_swizzled = nullptr;  // quant::sf_bytes(swizzled_128x4, rows, hidden / block), or nullptr
  int64_t rows = 0;
  int64_t hidden = 0;
  float eps = 1e-6f;
  float global_scale = 1.0f;  // NVFP4: SF = e4m3(g * amax / 6), q = e2m1(y * g / SF)
  quant::BlockFormat format = quant::BlockFormat::nvfp4;  // nvfp4 (blocks of 16) or mxfp4 (32)
  DType in_dtype = DType::bfloat16;                       // bfloat16 or float16
  bool enable_pdl = false;

  [[nodiscard]] int64_t block_size() const { return format == quant::BlockFormat::nvfp4 ? 16 : 32; }
  [[nodiscard]] int64_t scale_columns() const { return hidden / block_size(); }
};

// nullptr when launch_rmsnorm_fp4 takes these sizes and formats (pointers not looked at), else why
// not, in words.
[[nodiscard]] const char* rmsnorm_fp4_unsupported(const RmsNormFp4Params& params);

// Checks the parameters (also the pointers: non-null, aligned, non-overlapping) and launches;
// cudaErrorInvalidValue for what it does not take, else the launch status.
[[nodiscard]] cudaError_t launch_rmsnorm_fp4(const RmsNormFp4Params& params, cudaStream_t stream);

}  // namespace kbench::kernels
