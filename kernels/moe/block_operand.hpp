// The MoE's block-quantized activations as 16-bit GEMM operands (kbench's grouped GEMM on Hopper
// multiplies bf16 / fp16 A by FP4 weights expanded in its pipeline). The rules are
// block_formats.hpp's.
//   NVFP4: each element written as e2m1 x its block's e4m3 scale byte, exact in bf16 and fp16 (at
//          most 6 significant bits, from 2^-10 to 6 x 448); the per-tensor global scales move into
//          the GEMM's per-expert alpha, 1 / (g_activation x g_weight[e]).
//   MXFP8: each element's value e4m3 x 2^(scale byte - 127), exact in bf16 (4 significant bits,
//          fp32's exponent range; not fp16's); no global scale.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::moe {

inline constexpr int kNvfp4Block = quant::block_elements(quant::BlockFormat::nvfp4);
inline constexpr int kMxBlock = quant::block_elements(quant::BlockFormat::mxfp8);  // MXFP4 and MXFP8

// NVFP4's global scale of a tensor, the convention g = 448 * 6 / amax (the largest scale byte times
// e2m1's largest magnitude spans the tensor); 1 for an all-zero tensor, whose blocks are 0 anyway.
KBENCH_QUANT_HOST_DEVICE float nvfp4_global_scale(float amax) {
  return amax > 0.0f ? quant::ieee_div(448.0f * 6.0f, amax) : 1.0f;
}

// An element's operand value, e2m1 x scale byte (its value times the global scale).
KBENCH_QUANT_HOST_DEVICE float nvfp4_operand_value(uint8_t code, uint8_t sf) {
  return quant::e2m1_to_float(code) * quant::e4m3_to_float(sf);
}

// The GEMM alpha that turns operand values back into the product of the real values.
KBENCH_QUANT_HOST_DEVICE float nvfp4_alpha(float activation_global_scale, float weight_global_scale) {
  return quant::ieee_div(1.0f, activation_global_scale * weight_global_scale);
}

// An MXFP8 element's value.
KBENCH_QUANT_HOST_DEVICE float mxfp8_operand_value(uint8_t code, uint8_t sf) {
  return quant::e4m3_to_float(code) * quant::ue8m0_to_float(sf);
}

// x quantized in its NVFP4 or MXFP8 block (scale `s`, block_scale's) as its operand value.
KBENCH_QUANT_HOST_DEVICE float block_operand_value(quant::BlockFormat format, float x, const quant::BlockScale& s) {
  const uint8_t code = quant::quantize_element(format, x, s.factor);
  return format == quant::BlockFormat::nvfp4 ? nvfp4_operand_value(code, s.sf) : mxfp8_operand_value(code, s.sf);
}

// The host model of the kernels' NVFP4 (under global scale g) or MXFP8 (g unused: 1) quantization
// to operand values: `count` values (whole blocks), each block's scale byte from its amax.
inline void block_operand_values(quant::BlockFormat format, const float* x, int64_t count, float global_scale,
                                 float* out) {
  const int block = quant::block_elements(format);
  for (int64_t b = 0; b < count; b += block) {
    float amax = 0.0f;
    for (int i = 0; i < block; ++i) amax = std::max(amax, std::abs(x[b + i]));
    const quant::BlockScale s = quant::block_scale(format, amax, global_scale);
    for (int i = 0; i < block; ++i) out[b + i] = block_operand_value(format, x[b + i], s);
  }
}

}  // namespace kbench::kernels::moe
