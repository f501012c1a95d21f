// kbench's RMSNorm kernels: host-side launch API. Knows nothing of the harness.
//
// For each row r of `rows` rows of `hidden` elements:
//   v      = input[r]                               (fused add: v = round(input[r] + residual[r]),
//                                                    stored back to residual[r], rounded to the
//                                                    input dtype; the norm uses the stored value)
//   y      = v / sqrt(mean(v^2) + eps) * (weight_offset + weight) * out_scale
//   out[r] = y converted to out_dtype                (fp8: round-to-nearest-even, saturated to
//                                                    the largest finite value)
// With `silu` (fused_rmsnorm_silu; 16-bit output, no fused add): out[r] = y * sigmoid(y), fp32 math.
// rmsnorm: weight_offset 0, out_scale 1. gemma_rmsnorm (and gemma_fused_add_rmsnorm): weight_offset 1. The quant routines set
// out_dtype to fp8 and out_scale to --scale (multiplied, as the reference tool does).
// `output` may alias `input` (fused_add_rmsnorm works in place).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kbench/dtype.hpp"

namespace kbench::kernels {

struct RmsNormParams {
  const void* input = nullptr;   // [rows][hidden], row stride input_stride elements
  void* residual = nullptr;      // fused add only: [rows][hidden], read and written; else nullptr
  const void* weight = nullptr;  // [hidden], dtype in_dtype
  void* output = nullptr;        // [rows][hidden], row stride output_stride elements
  int64_t rows = 0;
  int64_t hidden = 0;
  int64_t input_stride = 0;
  int64_t residual_stride = 0;
  int64_t output_stride = 0;
  float eps = 1e-6f;
  float weight_offset = 0.0f;
  float out_scale = 1.0f;
  DType in_dtype = DType::bfloat16;   // bfloat16 or float16 (input, residual, weight)
  DType out_dtype = DType::bfloat16;  // in_dtype, fp8_e4m3 or fp8_e5m2
  bool enable_pdl = false;            // programmatic dependent launch (sm_90+)
  bool silu = false;                  // SiLU epilogue (out_dtype == in_dtype, residual nullptr)
};

// Checks the parameters (dtypes, sizes, alignment rules) and launches kbench's fast kernel.
// Returns cudaErrorInvalidValue for unsupported combinations, else the launch status.
[[nodiscard]] cudaError_t launch_rmsnorm(const RmsNormParams& params, cudaStream_t stream);

// The fp32 reference: one thread per row, plain loops, nothing clever. Writes the unrounded y
// (before conversion to out_dtype) to out_fp32 [rows][hidden] (contiguous) and, for the fused add,
// the stored residual (as fp32) to residual_fp32 [rows][hidden]; it does not modify its inputs.
// `silu` is not applied: the caller applies it to out_fp32.
[[nodiscard]] cudaError_t launch_rmsnorm_reference(const RmsNormParams& params, float* out_fp32,
                                                   float* residual_fp32, cudaStream_t stream);

// cudaSuccess when the fast kernel has machine code for the current device (the build's
// CMAKE_CUDA_ARCHITECTURES covers it); cudaErrorNoKernelImageForDevice otherwise.
[[nodiscard]] cudaError_t rmsnorm_kernel_available();

}  // namespace kbench::kernels
