// The MoE permutation's gather: each token's bf16 hidden row quantized once to DeepSeek FP8 1x128
// groupwise blocks (groupwise_fp8.hpp's rules) and written to every expert-contiguous row its local
// picks were given (permutation.hpp); picks of non-local experts write nothing. Scales K-major,
// [row][H/128] (WgmmaGemmParams a_scale_row_stride = H/128, a_scale_k_stride = 1).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/gemm/groupwise_fp8.hpp"

namespace kbench::kernels::moe {

inline constexpr int kPermuteBlock = 128;  // the 1x128 quantization block

struct PermuteQuantizeParams {
  const uint16_t* hidden = nullptr;        // [tokens][hidden_size] bf16
  const int32_t* permuted_rows = nullptr;  // [tokens][top_k], -1: non-local
  int64_t tokens = 0;
  int top_k = 0;
  int64_t hidden_size = 0;  // a multiple of 128
  uint8_t* out = nullptr;        // [rows][hidden_size] e4m3, rows = the permutation's total
  float* out_scale = nullptr;    // [rows][hidden_size / 128]
};

// A warp per (token, block). cudaErrorInvalidValue on a bad size or a missing pointer.
cudaError_t launch_permute_quantize(const PermuteQuantizeParams& params, cudaStream_t stream);

// The host reference: `hidden` as floats; out/out_scale must hold every row the picks name.
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

}  // namespace kbench::kernels::moe
