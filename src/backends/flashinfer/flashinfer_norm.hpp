// FlashInfer's own RMSNorm kernels (flashinfer/norm.cuh of flashinfer-python 0.7.2.post1) as the
// `flashinfer` yardstick backend. No FlashInfer or CUTLASS header is included here: callers compile
// without their include paths.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

#include "kbench/dtype.hpp"

namespace kbench::backends::flashinfer {

enum class NormOp {
  rmsnorm,
  fused_add_rmsnorm,
  gemma_rmsnorm,
  rmsnorm_quant,
  fused_add_rmsnorm_quant,
  gemma_fused_add_rmsnorm,
  layernorm_quant,
};

// Every tensor is row-major with `rows` rows of `hidden` contiguous elements (row stride = hidden);
// weight is [hidden]. All pointers are device pointers.
//   rmsnorm:                 output = input / sqrt(mean(input^2) + eps) * weight
//   gemma_rmsnorm:           output = input / sqrt(mean(input^2) + eps) * (1 + weight)   (pass the raw
//                            weight: FlashInfer adds the 1 itself, weight_bias = 1)
//   fused_add_rmsnorm:       residual += input (stored in dtype); input = normalise(sum) * weight,
//                            in place; output is ignored. FlashInfer normalises the fp32 sum, not the
//                            dtype-rounded residual it stores.
//   rmsnorm_quant:           output[out_dtype] = clamp(normalise(input) * weight / *scale, +-fp8 max)
//   fused_add_rmsnorm_quant: residual += input; output[out_dtype] = clamp(normalise(sum) * weight /
//                            *scale, +-fp8 max); input is left unchanged.
//   gemma_fused_add_rmsnorm: fused_add_rmsnorm with (1 + weight) (GemmaFusedAddRMSNorm).
//   layernorm_quant:         output[out_dtype] = fp8(bf16((input - mean) / std * gamma + beta) / *scale)
//                            (LayerNormQuant: fp32 gamma and beta; the normalised value is rounded to
//                            the input dtype before the division); weight is unused.
// `scale` is a device float (the *_quant ops only); FlashInfer DIVIDES by it, so pass the reciprocal
// of kbench's --scale.
struct NormArgs {
  NormOp op = NormOp::rmsnorm;
  void* input = nullptr;     // [rows][hidden], dtype
  void* residual = nullptr;  // [rows][hidden], dtype; fused add only, updated in place
  const void* weight = nullptr;  // [hidden], dtype
  void* output = nullptr;    // [rows][hidden], out_dtype; ignored by fused_add_rmsnorm
  int64_t rows = 0;
  int64_t hidden = 0;
  DType dtype = DType::bfloat16;      // bfloat16 or float16: input, residual, weight
  DType out_dtype = DType::bfloat16;  // = dtype, or fp8_e4m3 / fp8_e5m2 for the *_quant ops
  float eps = 1e-6f;
  const float* scale = nullptr;  // device pointer, *_quant only
  const float* gamma = nullptr;  // layernorm_quant: [hidden] fp32
  const float* beta = nullptr;   // layernorm_quant: [hidden] fp32
  bool enable_pdl = false;       // programmatic dependent launch attribute on the launch
};

// nullopt when run_norm can run this problem (op, dtypes, sizes; the pointers are not looked at, so
// it can be asked before any tensor exists); otherwise a one-line reason. Cheap (one
// cudaDeviceGetAttribute for the fused-add shared-memory limit).
[[nodiscard]] std::optional<std::string> norm_unsupported(const NormArgs& args);

// Launches FlashInfer's kernel on `stream`: no allocation, no synchronisation, CUDA-graph
// capturable. Returns the launch status (cudaErrorInvalidValue / cudaErrorNotSupported for arguments
// norm_unsupported rejects).
[[nodiscard]] cudaError_t run_norm(const NormArgs& args, cudaStream_t stream);

}  // namespace kbench::backends::flashinfer
