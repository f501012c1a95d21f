#include "routines/gemm/gemm_reference.hpp"

#include <algorithm>
#include <cmath>

#include "routines/quantization/quant_reference.hpp"

namespace kbench::gemm_reference {
namespace {

using kernels::gemm::ScaleMajor;

// Where block (r, kb) of an operand with `rows` block rows and k_blocks block columns keeps its
// scale: MN-major stores a k-block's scales contiguously, K-major a block row's.
int64_t scale_at(ScaleMajor major, int64_t block_rows, int64_t k_blocks, int64_t r, int64_t kb) {
  const int64_t row_stride = major == ScaleMajor::k ? k_blocks : 1;
  const int64_t k_stride = major == ScaleMajor::k ? 1 : block_rows;
  return r * row_stride + kb * k_stride;
}

// Blocks of block_height rows x tile columns; the last block row has the rows that are left.
GroupwiseOperand quantize(std::span<const float> x, int64_t rows, int64_t k, int64_t tile, int64_t block_height,
                          ScaleMajor major) {
  const int64_t block_rows = (rows + block_height - 1) / block_height;
  const int64_t k_blocks = k / tile;
  GroupwiseOperand out;
  out.bytes.resize(static_cast<std::size_t>(rows * k));
  out.scales.resize(static_cast<std::size_t>(block_rows * k_blocks));
  for (int64_t r = 0; r < block_rows; ++r) {
    const int64_t row_end = std::min((r + 1) * block_height, rows);
    for (int64_t kb = 0; kb < k_blocks; ++kb) {
      float amax = 0.0f;
      for (int64_t i = r * block_height; i < row_end; ++i) {
        for (int64_t c = kb * tile; c < (kb + 1) * tile; ++c) amax = std::max(amax, std::fabs(x[i * k + c]));
      }
      const float s = groupwise_scale(amax);
      out.scales[static_cast<std::size_t>(scale_at(major, block_rows, k_blocks, r, kb))] = s;
      const float divisor = s + 1e-8f;  // the reference's epsilon, in float
      for (int64_t i = r * block_height; i < row_end; ++i) {
        for (int64_t c = kb * tile; c < (kb + 1) * tile; ++c) {
          out.bytes[static_cast<std::size_t>(i * k + c)] = quant_reference::e4m3_code(x[i * k + c] / divisor);
        }
      }
    }
  }
  return out;
}

}  // namespace

float groupwise_scale(float amax) {
  const float v = std::max(amax, 1e-4f) / 448.0f;
  int exponent = 0;
  const float mantissa = std::frexp(v, &exponent);  // v = mantissa * 2^exponent, mantissa in [0.5, 1)
  return mantissa == 0.5f ? v : std::ldexp(1.0f, exponent);
}

GroupwiseOperand quantize_a(std::span<const float> a, int64_t m, int64_t k, int64_t tile, ScaleMajor major) {
  return quantize(a, m, k, tile, 1, major);
}

GroupwiseOperand quantize_b(std::span<const float> b, int64_t n, int64_t k, int64_t tile, ScaleMajor major) {
  return quantize(b, n, k, tile, tile, major);
}

std::vector<float> groupwise_gemm(const GroupwiseOperand& a, const GroupwiseOperand& b, int64_t m, int64_t n,
                                  int64_t k, int64_t tile, ScaleMajor major) {
  const int64_t k_blocks = k / tile;
  std::vector<float> d(static_cast<std::size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t kb = 0; kb < k_blocks; ++kb) {
        double block = 0.0;
        for (int64_t c = kb * tile; c < (kb + 1) * tile; ++c) {
          block += static_cast<double>(quant_reference::e4m3_value(a.bytes[static_cast<std::size_t>(i * k + c)])) *
                   quant_reference::e4m3_value(b.bytes[static_cast<std::size_t>(j * k + c)]);
        }
        sum += block * a.scales[static_cast<std::size_t>(scale_at(major, m, k_blocks, i, kb))] *
               b.scales[static_cast<std::size_t>(scale_at(major, (n + tile - 1) / tile, k_blocks, j / tile, kb))];
      }
      d[static_cast<std::size_t>(i * n + j)] = static_cast<float>(sum);
    }
  }
  return d;
}

}  // namespace kbench::gemm_reference
