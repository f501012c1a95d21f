// The combine kernel: a CTA per token, each thread 8 columns at a time (16-byte loads of every
// pick's row), the picks visited in order so the sum is the host reference's, bit for bit.
#include <cstdint>

#include "kernels/moe/combine.hpp"

namespace kbench::kernels::moe {
namespace {

constexpr int kThreads = 128;

__global__ void __launch_bounds__(kThreads) combine_kernel(CombineParams p) {
  const int64_t token = blockIdx.x;
  const int32_t* rows = p.permuted_rows + token * p.top_k;
  const float* weights = p.weights ? p.weights + token * p.top_k : nullptr;
  for (int64_t column = static_cast<int64_t>(threadIdx.x) * kCombineVector; column < p.hidden;
       column += static_cast<int64_t>(kThreads) * kCombineVector) {
    float acc[kCombineVector] = {};
    for (int j = 0; j < p.top_k; ++j) {
      const int32_t row = rows[j];
      if (row < 0) continue;
      const float weight = weights ? weights[j] : 1.0f;
      const uint4 packed = *reinterpret_cast<const uint4*>(p.expert_rows + row * p.hidden + column);
      const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
#pragma unroll
      for (int i = 0; i < kCombineVector; ++i) {
        const auto bits = static_cast<uint16_t>(i % 2 ? words[i / 2] >> 16 : words[i / 2] & 0xffffu);
        acc[i] = __fmaf_rn(weight, half_bits_to_float(bits, p.fp16), acc[i]);
      }
    }
    uint32_t out_words[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t low = float_to_half_bits(acc[2 * i], p.fp16);
      const uint32_t high = float_to_half_bits(acc[2 * i + 1], p.fp16);
      out_words[i] = low | high << 16;
    }
    *reinterpret_cast<uint4*>(p.output + token * p.hidden + column) =
        make_uint4(out_words[0], out_words[1], out_words[2], out_words[3]);
  }
}

}  // namespace

cudaError_t launch_combine(const CombineParams& p, cudaStream_t stream) {
  if (p.tokens < 0 || p.top_k < 1 || p.hidden <= 0 || p.hidden % kCombineVector != 0 ||
      (p.tokens > 0 && (!p.permuted_rows || !p.output))) {
    return cudaErrorInvalidValue;
  }
  if (p.tokens == 0) return cudaSuccess;
  combine_kernel<<<static_cast<unsigned>(p.tokens), kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::moe
