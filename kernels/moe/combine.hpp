// The MoE combine: output[t] = sum over the token's picks j, in pick order, of weight[t][j] (1 where
// no weights are given: Llama 4's routing scales went on the input) times the pick's FC2 row
// (expert-contiguous order, permutation.hpp), accumulated in fp32 with one fused multiply-add per
// pick and rounded once to the rows' 16-bit type (bf16 or fp16, round to nearest even). Picks of
// non-local experts (row -1) add nothing; a token with none gets zeros. Deterministic.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/moe/half_bits.hpp"

namespace kbench::kernels::moe {

// Rows are read and written 8 elements (16 bytes) at a time.
inline constexpr int kCombineVector = 8;

struct CombineParams {
  const uint16_t* expert_rows = nullptr;   // [rows][hidden], FC2's output
  bool fp16 = false;                       // the rows' and the output's type: fp16, else bf16
  const int32_t* permuted_rows = nullptr;  // [tokens][top_k]
  const float* weights = nullptr;          // [tokens][top_k], or null: every weight 1
  int64_t tokens = 0;
  int top_k = 0;
  int64_t hidden = 0;  // a multiple of kCombineVector
  uint16_t* output = nullptr;  // [tokens][hidden]
};

// A CTA per token. cudaErrorInvalidValue on a bad size or a missing pointer.
cudaError_t launch_combine(const CombineParams& params, cudaStream_t stream);

// bf16 bits of `value`, round to nearest even.
inline uint16_t combine_bf16_bits(float value) { return float_to_half_bits(value, false); }

// The host reference, the same operations in the same order (`weights` empty: every weight 1).
inline std::vector<uint16_t> combine_reference(const std::vector<uint16_t>& expert_rows,
                                               const std::vector<int32_t>& permuted_rows,
                                               const std::vector<float>& weights, int64_t tokens, int top_k,
                                               int64_t hidden, bool fp16 = false) {
  std::vector<uint16_t> out(static_cast<std::size_t>(tokens * hidden));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t h = 0; h < hidden; ++h) {
      float acc = 0.0f;
      for (int j = 0; j < top_k; ++j) {
        const int32_t row = permuted_rows[static_cast<std::size_t>(t * top_k + j)];
        if (row < 0) continue;
        const float x = half_bits_to_float(expert_rows[static_cast<std::size_t>(row * hidden + h)], fp16);
        const float w = weights.empty() ? 1.0f : weights[static_cast<std::size_t>(t * top_k + j)];
        acc = std::fma(w, x, acc);
      }
      out[static_cast<std::size_t>(t * hidden + h)] = float_to_half_bits(acc, fp16);
    }
  }
  return out;
}

}  // namespace kbench::kernels::moe
