#include "routines/quantization/quant_reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace kbench::quant_reference {
namespace {

using kernels::quant::BlockFormat;
using kernels::quant::SfLayout;

// The nearest entry of an ascending table of non-negative magnitudes; a tie goes to the even
// index (round to nearest even); beyond the last entry, the last (saturation).
template <std::size_t N>
uint8_t nearest_even(const std::array<float, N>& magnitudes, float a) {
  const auto upper = std::lower_bound(magnitudes.begin(), magnitudes.end(), a);
  if (upper == magnitudes.end()) return static_cast<uint8_t>(N - 1);
  const auto hi = static_cast<std::size_t>(upper - magnitudes.begin());
  if (hi == 0 || *upper == a) return static_cast<uint8_t>(hi);
  const std::size_t lo = hi - 1;
  const double below = static_cast<double>(a) - magnitudes[lo];
  const double above = static_cast<double>(magnitudes[hi]) - a;
  if (below < above) return static_cast<uint8_t>(lo);
  if (above < below) return static_cast<uint8_t>(hi);
  return static_cast<uint8_t>(lo % 2 == 0 ? lo : hi);
}

const std::array<float, 8>& e2m1_magnitudes() {
  static const std::array<float, 8> table = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  return table;
}

// e4m3's 127 non-negative finite magnitudes, by code 0x00..0x7E.
const std::array<float, 127>& e4m3_magnitudes() {
  static const std::array<float, 127> table = [] {
    std::array<float, 127> t{};
    for (int code = 0; code < 127; ++code) {
      const int exponent = code >> 3;
      const int mantissa = code & 7;
      t[code] = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -9)
                              : std::ldexp(1.0f + mantissa / 8.0f, exponent - 7);
    }
    return t;
  }();
  return table;
}

}  // namespace

uint8_t e2m1_code(float x) {
  if (std::isnan(x)) return 0x7;
  return static_cast<uint8_t>((std::signbit(x) ? 0x8 : 0) | nearest_even(e2m1_magnitudes(), std::fabs(x)));
}

uint8_t e4m3_code(float x) {
  if (std::isnan(x)) return 0x7F;
  return static_cast<uint8_t>((std::signbit(x) ? 0x80 : 0) | nearest_even(e4m3_magnitudes(), std::fabs(x)));
}

uint8_t ue8m0_code_round_up(float v) {
  if (std::isnan(v)) return 0xFF;
  if (v == 0.0f) return 0;
  if (std::isinf(v)) return 254;
  int exponent = 0;
  const float fraction = std::frexp(v, &exponent);  // v = fraction * 2^exponent, fraction in [0.5, 1)
  const int power = fraction == 0.5f ? exponent - 1 : exponent;  // the smallest 2^power >= v
  return static_cast<uint8_t>(std::clamp(power + 127, 0, 254));
}

float e2m1_value(uint8_t code) {
  const float m = e2m1_magnitudes()[code & 7];
  return (code & 8) ? -m : m;
}

float e4m3_value(uint8_t code) {
  if ((code & 0x7F) == 0x7F) return std::numeric_limits<float>::quiet_NaN();
  const float m = e4m3_magnitudes()[code & 0x7F];
  return (code & 0x80) ? -m : m;
}

float ue8m0_value(uint8_t code) {
  return code == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, code - 127);
}

int64_t scale_offset(SfLayout layout, int64_t row, int64_t column, int64_t columns) {
  if (layout == SfLayout::linear) return row * columns + column;
  // Tiles of tile_rows x 4 scale columns, stored tile row by tile row; inside a 128x4 tile the
  // rows are interleaved: byte (row % 32) * 16 + (row / 32 within the tile) * 4 + column % 4.
  const int64_t tile_rows = layout == SfLayout::swizzled_128x4 ? 128 : 8;
  const int64_t tile_bytes = tile_rows * 4;
  const int64_t tiles_per_tile_row = (columns + 3) / 4;
  const int64_t tile = (row / tile_rows) * tiles_per_tile_row + column / 4;
  const int64_t r = row % tile_rows;
  const int64_t c = column % 4;
  const int64_t inside = layout == SfLayout::swizzled_128x4 ? (r % 32) * 16 + (r / 32) * 4 + c : r * 4 + c;
  return tile * tile_bytes + inside;
}

BlockScale block_scale(BlockFormat format, float amax, float g) {
  BlockScale b;
  if (format == BlockFormat::nvfp4) {
    b.sf = e4m3_code(g * amax / 6.0f);
    b.factor = e4m3_value(b.sf) == 0.0f ? 0.0f : g / e4m3_value(b.sf);
  } else if (amax != 0.0f) {
    b.sf = ue8m0_code_round_up(amax / (format == BlockFormat::mxfp4 ? 6.0f : 448.0f));
    b.factor = 1.0f / ue8m0_value(b.sf);  // a power of two: exact
  }
  return b;
}

namespace {

int64_t destination_row(const kernels::QuantizeParams& s, int64_t row) {
  if (!s.shuffle_rows) return row;
  const int64_t base = row / 32 * 32;
  const int64_t r = row - base;
  return base + 8 * (r % 4) + r / 4;
}

}  // namespace

Quantized quantize(std::span<const float> input, const kernels::QuantizeParams& s) {
  const int64_t scale_columns = s.padded_columns / s.block_size;
  const int64_t row_bytes = s.output_row_bytes();
  const int64_t scale_bytes = s.scale_bytes_per_batch();
  Quantized q;
  q.data.assign(static_cast<std::size_t>(s.batches * s.rows * row_bytes), 0);
  q.scales.assign(static_cast<std::size_t>(s.batches * scale_bytes), 0);
  const bool per_token = s.token_scales != nullptr;
  if (per_token) q.token_scales.assign(static_cast<std::size_t>(s.rows), 0.0f);
  std::vector<float> block(static_cast<std::size_t>(s.block_size));
  for (int64_t b = 0; b < s.batches; ++b) {
    for (int64_t row = 0; row < s.rows; ++row) {
      const float* x = input.data() + (b * s.rows + row) * s.columns;
      float g = s.global_scale;
      if (per_token) {
        float amax = 0.0f;
        for (int64_t i = 0; i < s.columns; ++i) amax = std::max(amax, std::fabs(x[i]));
        const float token_scale = amax / 2688.0f;  // 448 * 6
        q.token_scales[static_cast<std::size_t>(row)] = token_scale;
        g = token_scale == 0.0f ? 0.0f : 1.0f / token_scale;
      }
      const int64_t out_row = destination_row(s, row);
      for (int64_t k = 0; k < scale_columns; ++k) {
        for (int64_t i = 0; i < s.block_size; ++i) {
          const int64_t column = k * s.block_size + i;
          block[static_cast<std::size_t>(i)] = column < s.columns ? x[column] : 0.0f;  // padding columns: zeros
        }
        float amax = 0.0f;
        for (float v : block) amax = std::max(amax, std::fabs(v));
        const auto [sf, factor] = quant_reference::block_scale(s.format, amax, g);
        uint8_t* out = q.data.data() + (b * s.rows + out_row) * row_bytes;
        for (int64_t i = 0; i < s.block_size; ++i) {
          const int64_t column = k * s.block_size + i;
          const float scaled = block[static_cast<std::size_t>(i)] * factor;
          if (s.format == BlockFormat::mxfp8) {
            out[column] = e4m3_code(scaled);
          } else {
            out[column / 2] = static_cast<uint8_t>(out[column / 2] | (e2m1_code(scaled) << (column % 2 == 0 ? 0 : 4)));
          }
        }
        q.scales[static_cast<std::size_t>(b * scale_bytes + scale_offset(s.layout, out_row, k, scale_columns))] = sf;
      }
    }
  }
  return q;
}

float dequantize(const Quantized& q, const kernels::QuantizeParams& s, int64_t batch, int64_t row, int64_t column) {
  const int64_t out_row = destination_row(s, row);
  const int64_t scale_columns = s.padded_columns / s.block_size;
  const uint8_t sf = q.scales[static_cast<std::size_t>(batch * s.scale_bytes_per_batch() +
                                                       scale_offset(s.layout, out_row, column / s.block_size, scale_columns))];
  const uint8_t* data = q.data.data() + (batch * s.rows + out_row) * s.output_row_bytes();
  switch (s.format) {
    case BlockFormat::nvfp4: {
      const float g = q.token_scales.empty() ? s.global_scale
                                             : (q.token_scales[static_cast<std::size_t>(row)] == 0.0f
                                                    ? 0.0f
                                                    : 1.0f / q.token_scales[static_cast<std::size_t>(row)]);
      if (g == 0.0f) return 0.0f;
      return e2m1_value(static_cast<uint8_t>(data[column / 2] >> (column % 2 == 0 ? 0 : 4))) * e4m3_value(sf) / g;
    }
    case BlockFormat::mxfp4:
      return e2m1_value(static_cast<uint8_t>(data[column / 2] >> (column % 2 == 0 ? 0 : 4))) * ue8m0_value(sf);
    case BlockFormat::mxfp8: return e4m3_value(data[column]) * ue8m0_value(sf);
  }
  return 0.0f;
}

}  // namespace kbench::quant_reference
