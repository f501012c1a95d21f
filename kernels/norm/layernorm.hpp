// kbench's LayerNorm with FP8 output (layernorm_quant): host-side launch API. Knows nothing of the
// harness.
//
// For each row r of `rows` rows of `hidden` elements (contiguous):
//   mean = sum(x) / hidden;  var = sum((x - mean)^2) / hidden  (two passes over the row in registers)
//   y    = (x - mean) / sqrt(var + eps) * gamma + beta          (gamma, beta: fp32 [hidden])
//   out  = fp8(y * out_scale), round to nearest even, saturated to the largest finite value
// --scale multiplies, as rmsnorm_quant's does (FlashInfer's LayerNormQuant divides by its scale
// tensor: its backend is passed the reciprocal). The RMSNorm kernels' register path's layout
// (16-byte vectors, the row held in registers): hidden a multiple of 8, at most 32768.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kbench/dtype.hpp"

namespace kbench::kernels {

struct LayerNormQuantParams {
  const void* input = nullptr;   // [rows][hidden], in_dtype, 16-byte aligned
  const float* gamma = nullptr;  // [hidden], 16-byte aligned
  const float* beta = nullptr;   // [hidden], 16-byte aligned
  void* output = nullptr;        // [rows][hidden], out_dtype, 8-byte aligned
  int64_t rows = 0;
  int64_t hidden = 0;
  float eps = 1e-6f;
  float out_scale = 1.0f;
  DType in_dtype = DType::bfloat16;   // bfloat16 or float16
  DType out_dtype = DType::fp8_e4m3;  // fp8_e4m3 or fp8_e5m2
  bool enable_pdl = false;
};

// nullptr when launch_layernorm_quant takes these sizes and dtypes (pointers not looked at), else
// why not, in words.
[[nodiscard]] const char* layernorm_quant_unsupported(const LayerNormQuantParams& params);

[[nodiscard]] cudaError_t launch_layernorm_quant(const LayerNormQuantParams& params, cudaStream_t stream);

}  // namespace kbench::kernels
