// The host reference of kbench's block quantization: the rules of kernels/quantization/
// block_formats.hpp written again the plain way (nearest value by table search, scale exponents
// by frexp, layouts as tile coordinates), sharing no code with the kernels. The refcheck expects
// the kernels' packed bytes, scale bytes and token scales to equal these exactly.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/quantization/quantize.hpp"

namespace kbench::quant_reference {

[[nodiscard]] uint8_t e2m1_code(float x);
[[nodiscard]] uint8_t e4m3_code(float x);
[[nodiscard]] uint8_t ue8m0_code_round_up(float v);
[[nodiscard]] float e2m1_value(uint8_t code);
[[nodiscard]] float e4m3_value(uint8_t code);
[[nodiscard]] float ue8m0_value(uint8_t code);
[[nodiscard]] int64_t scale_offset(kernels::quant::SfLayout layout, int64_t row, int64_t column, int64_t columns);

// One block's scale byte and the factor that maps its values onto the element grid (NVFP4:
// e4m3(g * amax / 6), g / SF; MX formats: the power of two at or above amax / 6 or / 448).
struct BlockScale {
  uint8_t sf = 0;
  float factor = 0.0f;
};
[[nodiscard]] BlockScale block_scale(kernels::quant::BlockFormat format, float amax, float global_scale);

struct Quantized {
  std::vector<uint8_t> data;          // [batches][rows][output_row_bytes]
  std::vector<uint8_t> scales;        // [batches][scale_bytes_per_batch]
  std::vector<float> token_scales;    // [rows] with per-token scales, else empty
};

// Quantizes `input` ([batches][rows][columns]) as `shape` describes (its pointers are ignored;
// per_token: token_scales non-null).
[[nodiscard]] Quantized quantize(std::span<const float> input, const kernels::QuantizeParams& shape);

// The value element (batch, row, column) decodes to (input row order; shuffled rows undone).
[[nodiscard]] float dequantize(const Quantized& q, const kernels::QuantizeParams& shape, int64_t batch, int64_t row,
                               int64_t column);

}  // namespace kbench::quant_reference
