// The MoE's activation between the two grouped GEMMs. Gated: FC1's 16-bit output row (bf16 or fp16)
// [0, I) is the linear ("up") half x0, [I, 2I) the gate half x1 (moe.md); a = f(x1) * x0 with f =
// SiLU (x / (1 + e^-x), SwiGLU), exact GELU (x/2 (1 + erf(x / sqrt 2)), GeGLU) or tanh GELU (x/2 (1 +
// tanh(sqrt(2/pi) (x + 0.044715 x^3))), b12x's GeGLU); non-gated (Relu2): FC1's row is I wide, a =
// relu(x)^2. In fp32 (FC1's values first multiplied by the row's routing weight where one is given:
// Llama 4's routing scales on the input, FC1 being linear), then written in the format FC2 reads:
//   fp8_block:      DeepSeek FP8 1x128 groupwise blocks (groupwise_fp8.hpp's rules), scales K-major
//                   [row][I/128] (WgmmaGemmParams a_scale_row_stride = I/128, a_scale_k_stride = 1);
//   fp8_per_tensor: one dynamic scale for every row in use, by the same rule (the power of two at or
//                   above amax / 448): a first kernel finds the amax, a second writes the codes and
//                   the scale (FC2's per-tensor A scale, on the device);
//   half:           FC1's 16-bit type, rounded to nearest even;
//   nvfp4:          NVFP4 (16-blocks, e4m3 scale bytes) under a dynamic global scale g = 448 * 6 /
//                   amax of every row in use (an amax pass first, as fp8_per_tensor), written as
//                   16-bit operand values e2m1 x scale byte (block_operand.hpp: FC2 expands its FP4
//                   weights to 16 bits, so A stays 16-bit, exactly the NVFP4 values times g); g goes
//                   to out_scale and FC2's per-expert alpha, 1 / (g x the expert's weight global
//                   scale), to group_alpha: all on the device;
//   mxfp8:          MXFP8 (32-blocks, ue8m0 scale bytes; no global scale), written as the bf16 values
//                   e4m3 x 2^(scale byte - 127) (exact).
// A separate kernel for now; fusing it into FC1's epilogue is a later optimisation.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kbench/dtype.hpp"
#include "kernels/common/gated_linear_unit.hpp"
#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/moe/half_bits.hpp"
#include "kernels/moe/block_operand.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::moe {

enum class GatedActivation { swiglu, geglu, geglu_tanh, relu2 };

// FC1's rows are 2I wide (up and gate) for the gated activations, I for Relu2.
#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
constexpr bool is_gated(GatedActivation activation) {
  return activation != GatedActivation::relu2;
}
enum class ActivationOutput { fp8_block, fp8_per_tensor, half, nvfp4, mxfp8 };


inline constexpr int kActivationBlock = 128;  // the 1x128 quantization block

struct GatedActivationParams {
  GatedActivation activation = GatedActivation::swiglu;
  ActivationOutput output = ActivationOutput::fp8_block;
  const uint16_t* fc1 = nullptr;       // [max_rows][2 * intermediate] (relu2: [max_rows][intermediate])
  DType fc1_dtype = DType::bfloat16;   // bfloat16 or float16
  const float* row_weights = nullptr;  // optional [max_rows]: multiplies both halves
  const int32_t* row_count = nullptr;  // device: rows in use (the permutation's row_offsets[local experts])
  int64_t max_rows = 0;                // rows the grid covers (tokens * top_k)
  int64_t intermediate = 0;            // I: a multiple of 128 (fp8_block, nvfp4, mxfp8), else of 4
  void* out = nullptr;                 // [max_rows][I]: e4m3, or fc1_dtype (half, nvfp4, mxfp8: bf16)
  float* out_scale = nullptr;          // fp8_block: [max_rows][I / 128]; fp8_per_tensor, nvfp4: one float
  float* amax = nullptr;               // fp8_per_tensor, nvfp4: one float of scratch (the launch zeroes it)
  // nvfp4: FC2's groups (the local experts), their weights' NVFP4 global scales [groups] and the
  // alpha written for each [groups].
  int groups = 0;
  const float* weight_global_scales = nullptr;
  float* group_alpha = nullptr;
};

// cudaErrorInvalidValue on a bad size, dtype or a missing pointer. Rows at or past *row_count are
// left untouched.
cudaError_t launch_gated_activation(const GatedActivationParams& params, cudaStream_t stream);

// The activation of FC1's values (relu2 reads `up` alone, FC1's one value), the kernel's and the host
// reference's: SwiGLU and GeGLU as kbench's GEMM epilogue computes them (gated_linear_unit.hpp). On
// the host exp, erf and tanh are its library's, so a code may differ from the kernel's by one step
// where the activation lands on a rounding boundary (the GPU test allows that).
#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
float gated_activation_value(GatedActivation activation, float up, float gate) {
  switch (activation) {
    case GatedActivation::swiglu: return gated_linear_unit(GatedLinearUnit::swiglu, up, gate);
    case GatedActivation::geglu: return gated_linear_unit(GatedLinearUnit::geglu, up, gate);
    case GatedActivation::geglu_tanh:
      return 0.5f * gate * (1.0f + tanhf(0.79788456080286536f * (gate + 0.044715f * gate * gate * gate))) * up;
    case GatedActivation::relu2: {
      const float r = fmaxf(up, 0.0f);
      return r * r;
    }
  }
  return 0.0f;
}

// The activation of `rows` rows of `fc1` (floats [rows][2I], relu2 [rows][I]) in fp32, [rows][I];
// row r's values times row_weights[r] where given.
inline std::vector<float> gated_activation_values(GatedActivation activation, const std::vector<float>& fc1,
                                                  int64_t rows, int64_t intermediate,
                                                  const std::vector<float>* row_weights = nullptr) {
  std::vector<float> a(static_cast<std::size_t>(rows * intermediate));
  for (int64_t r = 0; r < rows; ++r) {
    const float w = row_weights ? (*row_weights)[static_cast<std::size_t>(r)] : 1.0f;
    const int64_t stride = is_gated(activation) ? 2 * intermediate : intermediate;
    for (int64_t c = 0; c < intermediate; ++c) {
      const float up = fc1[static_cast<std::size_t>(r * stride + c)];
      const float gate = is_gated(activation) ? fc1[static_cast<std::size_t>(r * stride + intermediate + c)] : 0.0f;
      a[static_cast<std::size_t>(r * intermediate + c)] =
          row_weights ? gated_activation_value(activation, up * w, gate * w) : gated_activation_value(activation, up, gate);
    }
  }
  return a;
}

// fp8_block of the values `a` [rows][I]: out [rows][I] and out_scale [rows][I/128].
inline void quantize_activation_blocks(const std::vector<float>& a, int64_t rows, int64_t intermediate,
                                       std::vector<uint8_t>& out, std::vector<float>& out_scale) {
  const int64_t blocks = intermediate / kActivationBlock;
  out.assign(static_cast<std::size_t>(rows * intermediate), 0);
  out_scale.assign(static_cast<std::size_t>(rows * blocks), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      const float* x = a.data() + r * intermediate + b * kActivationBlock;
      float amax = 0.0f;
      for (int i = 0; i < kActivationBlock; ++i) amax = std::max(amax, std::abs(x[i]));
      const float scale = gemm::groupwise_scale(amax);
      out_scale[static_cast<std::size_t>(r * blocks + b)] = scale;
      for (int i = 0; i < kActivationBlock; ++i) {
        out[static_cast<std::size_t>(r * intermediate + b * kActivationBlock + i)] = gemm::groupwise_quantize(x[i], scale);
      }
    }
  }
}

// nvfp4 of the values `a` (every row in use) in place: the operand values the kernel writes; returns
// the global scale g (a / g holds the NVFP4 values).
inline float nvfp4_activation_values(std::vector<float>& a) {
  float amax = 0.0f;
  for (const float v : a) amax = std::max(amax, std::abs(v));
  const float g = nvfp4_global_scale(amax);
  block_operand_values(quant::BlockFormat::nvfp4, a.data(), static_cast<int64_t>(a.size()), g, a.data());
  return g;
}

// The fp8_block reference of `fc1` floats [rows][2I].
inline void gated_activation_reference(GatedActivation activation, const std::vector<float>& fc1, int64_t rows,
                                       int64_t intermediate, std::vector<uint8_t>& out, std::vector<float>& out_scale) {
  quantize_activation_blocks(gated_activation_values(activation, fc1, rows, intermediate), rows, intermediate, out,
                             out_scale);
}

}  // namespace kbench::kernels::moe
