// The MoE's gated activation between the two grouped GEMMs: FC1's bf16 output row [0, I) is the
// linear ("up") half x0, [I, 2I) the gate half x1 (moe.md); a = f(x1) * x0 with f = SiLU
// (x / (1 + e^-x), SwiGLU) or exact GELU (x/2 (1 + erf(x / sqrt 2)), GeGLU), in fp32, then
// quantized for FC2 as DeepSeek FP8 1x128 groupwise blocks (groupwise_fp8.hpp's rules). The scales
// are K-major, [row][I/128]: WgmmaGemmParams a_scale_row_stride = I/128, a_scale_k_stride = 1.
// A separate kernel for now; fusing it into FC1's epilogue is a later optimisation.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::moe {

enum class GatedActivation { swiglu, geglu };

inline constexpr int kActivationBlock = 128;  // the 1x128 quantization block

struct GatedActivationParams {
  GatedActivation activation = GatedActivation::swiglu;
  const uint16_t* fc1 = nullptr;       // [max_rows][2 * intermediate] bf16
  const int32_t* row_count = nullptr;  // device: rows in use (the permutation's row_offsets[local experts])
  int64_t max_rows = 0;                // rows the grid covers (tokens * top_k)
  int64_t intermediate = 0;            // I, a multiple of 128
  uint8_t* out = nullptr;              // [max_rows][I] e4m3
  float* out_scale = nullptr;          // [max_rows][I / 128]
};

// cudaErrorInvalidValue on a bad size or a missing pointer. Rows at or past *row_count are left
// untouched.
cudaError_t launch_gated_activation(const GatedActivationParams& params, cudaStream_t stream);

// The host reference: `fc1` as floats [rows][2I]; fills out [rows][I] and out_scale [rows][I/128].
// Its exp and erf are the host library's, so a code may differ from the kernel's by one step
// where the activation lands on a rounding boundary of e4m3 (the GPU test allows that).
inline float gated_activation_value(GatedActivation activation, float up, float gate) {
  const float f = activation == GatedActivation::swiglu ? gate / (1.0f + std::exp(-gate))
                                                        : 0.5f * gate * (1.0f + std::erf(gate * 0.70710678118654752f));
  return f * up;
}
inline void gated_activation_reference(GatedActivation activation, const std::vector<float>& fc1, int64_t rows,
                                       int64_t intermediate, std::vector<uint8_t>& out, std::vector<float>& out_scale) {
  const int64_t blocks = intermediate / kActivationBlock;
  out.assign(static_cast<std::size_t>(rows * intermediate), 0);
  out_scale.assign(static_cast<std::size_t>(rows * blocks), 0.0f);
  std::vector<float> a(kActivationBlock);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      float amax = 0.0f;
      for (int i = 0; i < kActivationBlock; ++i) {
        const int64_t col = b * kActivationBlock + i;
        a[static_cast<std::size_t>(i)] = gated_activation_value(
            activation, fc1[static_cast<std::size_t>(r * 2 * intermediate + col)],
            fc1[static_cast<std::size_t>(r * 2 * intermediate + intermediate + col)]);
        amax = std::max(amax, std::abs(a[static_cast<std::size_t>(i)]));
      }
      const float scale = gemm::groupwise_scale(amax);
      out_scale[static_cast<std::size_t>(r * blocks + b)] = scale;
      for (int i = 0; i < kActivationBlock; ++i) {
        out[static_cast<std::size_t>(r * intermediate + b * kActivationBlock + i)] =
            gemm::groupwise_quantize(a[static_cast<std::size_t>(i)], scale);
      }
    }
  }
}

}  // namespace kbench::kernels::moe
