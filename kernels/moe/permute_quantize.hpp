// The MoE permutation's gather: each token's hidden row written to every expert-contiguous row its
// local picks were given (permutation.hpp), in the format the FC1 GEMM reads; picks of non-local
// experts write nothing. The row is converted once per token, not per pick:
//   fp8_block:      bf16 -> DeepSeek FP8 1x128 groupwise blocks (groupwise_fp8.hpp's rules), scales
//                   K-major [row][H/128] (WgmmaGemmParams a_scale_row_stride = H/128, k stride 1);
//   fp8_per_tensor: bf16 or fp16 -> e4m3(x / s), s the one dequantization scale on the device (the
//                   static activation scale a caller calibrated), saturated to +-448;
//   copy:           the row as it is (16-bit activations, or hidden states already in e4m3);
//   fp8_block_copy: hidden states already in DeepSeek FP8 (e4m3 codes and fp32 1x128 scales
//                   [token][H/128], as the MoE all-to-all dispatches them): codes and scales as they are;
//   nvfp4_dequantize: NVFP4 hidden states (packed e2m1 pairs, one e4m3 scale byte per 16 elements,
//                   linear [token][H/16]) -> 16-bit operand values e2m1 x scale byte (exact,
//                   block_operand.hpp; the global scale goes into FC1's alpha);
//   nvfp4_quantize: bf16 or fp16 -> NVFP4 under the global scale on the device (16-blocks, the
//                   quantizer's rules), written as 16-bit operand values likewise;
//   mxfp8_dequantize: MXFP8 hidden states (e4m3 codes, one ue8m0 scale byte per 32 elements,
//                   linear [token][H/32]) -> their bf16 values (exact).
// Optionally each row also receives its pick's routing weight (Llama 4's routing scales on the
// input: the activation multiplies the row by it).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kbench/dtype.hpp"
#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/moe/half_bits.hpp"
#include "kernels/moe/block_operand.hpp"

namespace kbench::kernels::moe {

inline constexpr int kPermuteBlock = 128;  // the 1x128 quantization block; rows are whole blocks

enum class GatherFormat { fp8_block, fp8_per_tensor, copy, fp8_block_copy, nvfp4_dequantize, nvfp4_quantize, mxfp8_dequantize };

struct PermuteQuantizeParams {
  GatherFormat format = GatherFormat::fp8_block;
  const void* hidden = nullptr;  // [tokens][hidden_size] (nvfp4_dequantize: [tokens][hidden_size / 2] bytes)
  // fp8_block: bfloat16; fp8_per_tensor, nvfp4_quantize: bf16/fp16; copy: 1 or 2 bytes; fp8_block_copy: e4m3;
  // nvfp4_dequantize, mxfp8_dequantize: uint8
  DType hidden_dtype = DType::bfloat16;
  // nvfp4_dequantize: e4m3 scale bytes [tokens][hidden_size / 16]; mxfp8_dequantize: ue8m0
  // [tokens][hidden_size / 32]
  const uint8_t* hidden_sf = nullptr;
  const float* hidden_block_scales = nullptr;  // fp8_block_copy: [tokens][hidden_size / 128]
  DType out_dtype = DType::bfloat16;   // nvfp4_*: the operand values' 16-bit type; mxfp8_dequantize: bf16
  const int32_t* permuted_rows = nullptr;  // [tokens][top_k], -1: non-local
  int64_t tokens = 0;
  int top_k = 0;
  int64_t hidden_size = 0;  // a multiple of 128
  // fp8_per_tensor: the dequantization scale; nvfp4_quantize: NVFP4's global scale (device)
  const float* tensor_scale = nullptr;
  // [rows][hidden_size], e4m3, hidden_dtype (copy) or out_dtype (nvfp4_*, mxfp8_*); rows = the permutation's total
  void* out = nullptr;
  float* out_scale = nullptr;  // fp8_block, fp8_block_copy: [rows][hidden_size / 128]
  const float* pick_weights = nullptr;  // optional [tokens][top_k]: each row gets its pick's weight ...
  float* row_weights = nullptr;         // ... here, [rows]
};

// A warp per (token, block). cudaErrorInvalidValue on a bad size, dtype or missing pointer.
cudaError_t launch_permute_quantize(const PermuteQuantizeParams& params, cudaStream_t stream);

// The per-tensor code of x under dequantization scale s: e4m3(x / s), saturated (host and device).
#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
uint8_t per_tensor_quantize(float x, float scale) {
  return quant::float_to_e4m3(x / scale);
}

// The host reference of fp8_block: `hidden` as floats; out/out_scale must hold every row the picks
// name.
inline void permute_quantize_reference(const std::vector<float>& hidden, const std::vector<int32_t>& permuted_rows,
                                       int64_t tokens, int top_k, int64_t hidden_size, std::vector<uint8_t>& out,
                                       std::vector<float>& out_scale) {
  const int64_t blocks = hidden_size / kPermuteBlock;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t b = 0; b < blocks; ++b) {
      const float* x = hidden.data() + t * hidden_size + b * kPermuteBlock;
      float amax = 0.0f;
      for (int i = 0; i < kPermuteBlock; ++i) amax = std::max(amax, std::abs(x[i]));
      const float scale = gemm::groupwise_scale(amax);
      for (int j = 0; j < top_k; ++j) {
        const int32_t row = permuted_rows[static_cast<std::size_t>(t * top_k + j)];
        if (row < 0) continue;
        out_scale[static_cast<std::size_t>(row * blocks + b)] = scale;
        for (int i = 0; i < kPermuteBlock; ++i) {
          out[static_cast<std::size_t>(row * hidden_size + b * kPermuteBlock + i)] = gemm::groupwise_quantize(x[i], scale);
        }
      }
    }
  }
}

// The host reference of the other formats on raw elements of `element_bytes` each (fp8_per_tensor:
// 16-bit input, fp16 or bf16, one code out; copy: the bytes).
inline void permute_rows_reference(GatherFormat format, const std::vector<uint8_t>& hidden, int element_bytes,
                                   bool fp16, float tensor_scale, const std::vector<int32_t>& permuted_rows,
                                   int64_t tokens, int top_k, int64_t hidden_size, std::vector<uint8_t>& out) {
  const int out_bytes = format == GatherFormat::copy ? element_bytes : 1;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int j = 0; j < top_k; ++j) {
      const int32_t row = permuted_rows[static_cast<std::size_t>(t * top_k + j)];
      if (row < 0) continue;
      const uint8_t* in = hidden.data() + t * hidden_size * element_bytes;
      uint8_t* dst = out.data() + row * hidden_size * out_bytes;
      if (format == GatherFormat::copy) {
        std::memcpy(dst, in, static_cast<std::size_t>(hidden_size * element_bytes));
        continue;
      }
      for (int64_t i = 0; i < hidden_size; ++i) {
        uint16_t bits;
        std::memcpy(&bits, in + 2 * i, 2);
        dst[i] = per_tensor_quantize(half_bits_to_float(bits, fp16), tensor_scale);
      }
    }
  }
}

}  // namespace kbench::kernels::moe
