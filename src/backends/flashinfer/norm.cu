// FlashInfer's RMSNorm family (flashinfer/norm.cuh), bf16 and fp16 inputs, fp8 e4m3/e5m2 outputs for
// the *_quant ops. One translation unit: the kernels are small.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

// LayerNormQuant is compiled only with ENABLE_FP8, whose conversions need ENABLE_BF16 (FlashInfer's
// JIT builds define both).
#ifndef ENABLE_BF16
#define ENABLE_BF16 1
#endif
#ifndef ENABLE_FP8
#define ENABLE_FP8 1
#endif
#include <flashinfer/norm.cuh>

#include <exception>
#include <limits>

#include "backends/flashinfer/flashinfer_norm.hpp"

namespace {

using kbench::DType;
using kbench::backends::flashinfer::NormArgs;
using kbench::backends::flashinfer::NormOp;

template <typename T, typename O>
cudaError_t launch_quant(const NormArgs& a, cudaStream_t stream) {
  auto* input = static_cast<T*>(a.input);
  auto* weight = static_cast<T*>(const_cast<void*>(a.weight));
  auto* out = static_cast<O*>(a.output);
  auto* scale = const_cast<float*>(a.scale);
  const auto rows = static_cast<uint32_t>(a.rows), d = static_cast<uint32_t>(a.hidden);
  if (a.op == NormOp::rmsnorm_quant) {
    return ::flashinfer::norm::RMSNormQuant<T, O>(input, weight, out, rows, d, /*stride_input=*/d,
                                                  /*stride_output=*/d, scale, a.eps, a.enable_pdl, stream);
  }
  return ::flashinfer::norm::FusedAddRMSNormQuant<T, O>(input, static_cast<T*>(a.residual), weight, out, rows, d,
                                                        /*stride_input=*/d, /*stride_residual=*/d,
                                                        /*stride_output=*/d, scale, a.eps, a.enable_pdl, stream);
}

template <typename T, typename O>
cudaError_t launch_layernorm(const NormArgs& a, cudaStream_t stream) {
  return ::flashinfer::norm::LayerNormQuant<T, float, O>(
      static_cast<T*>(a.input), const_cast<float*>(a.gamma), const_cast<float*>(a.beta), static_cast<O*>(a.output),
      const_cast<float*>(a.scale), static_cast<uint32_t>(a.rows), static_cast<uint32_t>(a.hidden), a.eps, stream);
}

template <typename T>
cudaError_t launch(const NormArgs& a, cudaStream_t stream) {
  auto* input = static_cast<T*>(a.input);
  auto* weight = static_cast<T*>(const_cast<void*>(a.weight));
  const auto rows = static_cast<uint32_t>(a.rows), d = static_cast<uint32_t>(a.hidden);
  switch (a.op) {
    case NormOp::rmsnorm:
      return ::flashinfer::norm::RMSNorm<T>(input, weight, static_cast<T*>(a.output), rows, d, d, d, a.eps,
                                            a.enable_pdl, stream);
    case NormOp::gemma_rmsnorm:
      return ::flashinfer::norm::GemmaRMSNorm<T>(input, weight, static_cast<T*>(a.output), rows, d, d, d, a.eps,
                                                 a.enable_pdl, stream);
    case NormOp::fused_add_rmsnorm:
      return ::flashinfer::norm::FusedAddRMSNorm<T>(input, static_cast<T*>(a.residual), weight, rows, d,
                                                    /*stride_input=*/d, /*stride_residual=*/d, a.eps,
                                                    a.enable_pdl, stream);
    case NormOp::gemma_fused_add_rmsnorm:
      return ::flashinfer::norm::GemmaFusedAddRMSNorm<T>(input, static_cast<T*>(a.residual), weight, rows, d,
                                                         /*stride_input=*/d, /*stride_residual=*/d, a.eps,
                                                         a.enable_pdl, stream);
    case NormOp::layernorm_quant:
      if (a.out_dtype == DType::fp8_e4m3) return launch_layernorm<T, __nv_fp8_e4m3>(a, stream);
      if (a.out_dtype == DType::fp8_e5m2) return launch_layernorm<T, __nv_fp8_e5m2>(a, stream);
      return cudaErrorInvalidValue;
    case NormOp::rmsnorm_quant:
    case NormOp::fused_add_rmsnorm_quant:
      if (a.out_dtype == DType::fp8_e4m3) return launch_quant<T, __nv_fp8_e4m3>(a, stream);
      if (a.out_dtype == DType::fp8_e5m2) return launch_quant<T, __nv_fp8_e5m2>(a, stream);
      return cudaErrorInvalidValue;
  }
  return cudaErrorInvalidValue;
}

bool is_quant(NormOp op) {
  return op == NormOp::rmsnorm_quant || op == NormOp::fused_add_rmsnorm_quant || op == NormOp::layernorm_quant;
}
bool is_fused_add(NormOp op) {
  return op == NormOp::fused_add_rmsnorm || op == NormOp::fused_add_rmsnorm_quant ||
         op == NormOp::gemma_fused_add_rmsnorm;
}

}  // namespace

namespace kbench::backends::flashinfer {

std::optional<std::string> norm_unsupported(const NormArgs& a) {
  if (a.dtype != DType::bfloat16 && a.dtype != DType::float16) {
    return "FlashInfer's norm kernels are instantiated for bfloat16 and float16 inputs only, not " +
           std::string(dtype_name(a.dtype));
  }
  if (is_quant(a.op)) {
    if (!is_fp8(a.out_dtype)) {
      return "the *_quant norms write fp8_e4m3 or fp8_e5m2, not " + std::string(dtype_name(a.out_dtype));
    }
  } else if (a.out_dtype != a.dtype) {
    return "FlashInfer's non-quant norms write the input dtype, not " + std::string(dtype_name(a.out_dtype));
  }
  if (a.rows <= 0 || a.hidden <= 0) return "empty norm problem";
  // One CTA per row (grid.x <= 2^31 - 1), and the kernels index rows as blockIdx.x * stride in 32 bits.
  if (a.rows * a.hidden > static_cast<int64_t>(std::numeric_limits<uint32_t>::max())) {
    return "rows * hidden exceeds 2^32: FlashInfer's norm kernels index rows with 32-bit offsets";
  }
  if (a.op == NormOp::layernorm_quant && a.hidden * static_cast<int64_t>(dtype_size(a.dtype)) >= (48 << 10)) {
    // Above 48 KB LayerNormQuant asks for more shared memory and, refused, silently takes another path.
    return "hidden " + std::to_string(a.hidden) + " is beyond what kbench runs FlashInfer's LayerNormQuant at (row in " +
           "under 48 KB of shared memory)";
  }
  if (is_fused_add(a.op)) {
    // The fused-add kernels keep the whole fp32 row in shared memory (hidden floats + the warp sums).
    int device = 0, optin = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
      return "cannot query the device's shared memory";
    }
    const int64_t smem = (a.hidden + 32) * static_cast<int64_t>(sizeof(float));
    if (smem > optin) {
      return "hidden " + std::to_string(a.hidden) + " needs " + std::to_string(smem) +
             " bytes of shared memory in FlashInfer's fused-add norm (row kept in fp32), above the device's " +
             std::to_string(optin);
    }
  }
  return std::nullopt;
}

cudaError_t run_norm(const NormArgs& a, cudaStream_t stream) {
  try {
    if (a.dtype == DType::bfloat16) return launch<__nv_bfloat16>(a, stream);
    if (a.dtype == DType::float16) return launch<__half>(a, stream);
    return cudaErrorInvalidValue;
  } catch (const std::exception&) {  // FlashInfer's dispatch macros throw on values they cannot take
    return cudaErrorInvalidValue;
  }
}

}  // namespace kbench::backends::flashinfer
