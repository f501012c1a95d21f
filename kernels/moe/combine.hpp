// The MoE combine: output[t] = sum over the token's picks j, in pick order, of weight[t][j] times
// the pick's FC2 row (expert-contiguous order, permutation.hpp), accumulated in fp32 with one
// fused multiply-add per pick and rounded once to bf16 (round to nearest even). Picks of
// non-local experts (row -1) add nothing; a token with none gets zeros. Deterministic.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kbench::kernels::moe {

// Rows are read and written 8 bf16 (16 bytes) at a time.
inline constexpr int kCombineVector = 8;

struct CombineParams {
  const uint16_t* expert_rows = nullptr;   // [rows][hidden] bf16, FC2's output
  const int32_t* permuted_rows = nullptr;  // [tokens][top_k]
  const float* weights = nullptr;          // [tokens][top_k]
  int64_t tokens = 0;
  int top_k = 0;
  int64_t hidden = 0;  // a multiple of kCombineVector
  uint16_t* output = nullptr;  // [tokens][hidden] bf16
};

// A CTA per token. cudaErrorInvalidValue on a bad size or a missing pointer.
cudaError_t launch_combine(const CombineParams& params, cudaStream_t stream);

// bf16 bits of `value`, round to nearest even (finite values; the combine's only use).
inline uint16_t combine_bf16_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// The host reference, the same operations in the same order.
inline std::vector<uint16_t> combine_reference(const std::vector<uint16_t>& expert_rows,
                                               const std::vector<int32_t>& permuted_rows,
                                               const std::vector<float>& weights, int64_t tokens, int top_k,
                                               int64_t hidden) {
  std::vector<uint16_t> out(static_cast<std::size_t>(tokens * hidden));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t h = 0; h < hidden; ++h) {
      float acc = 0.0f;
      for (int j = 0; j < top_k; ++j) {
        const int32_t row = permuted_rows[static_cast<std::size_t>(t * top_k + j)];
        if (row < 0) continue;
        const uint32_t wide = static_cast<uint32_t>(expert_rows[static_cast<std::size_t>(row * hidden + h)]) << 16;
        float x;
        std::memcpy(&x, &wide, sizeof x);
        acc = std::fma(weights[static_cast<std::size_t>(t * top_k + j)], x, acc);
      }
      out[static_cast<std::size_t>(t * hidden + h)] = combine_bf16_bits(acc);
    }
  }
  return out;
}

}  // namespace kbench::kernels::moe
