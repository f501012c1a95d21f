// Host inputs the GEMM family's kernel tests draw (deterministic by seed), and slices of the host
// reference's operands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/gemm/groupwise_fp8.hpp"
#include "routines/gemm/gemm_reference.hpp"

namespace kbench::testing {

// `count` values of N(0, stddev^2).
inline std::vector<float> normals(std::size_t count, float stddev, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(count);
  for (float& x : v) x = d(rng);
  return v;
}

// Rows [begin, end) of a groupwise A of `rows` rows, their scales rewritten into a layout of their
// own (one group's operand of a grouped GEMM).
inline gemm_reference::GroupwiseOperand a_rows(const gemm_reference::GroupwiseOperand& a, int64_t rows, int64_t begin,
                                               int64_t end, int64_t k, kernels::gemm::ScaleMajor major) {
  const int64_t kb = k / 128, count = end - begin;
  gemm_reference::GroupwiseOperand out;
  out.bytes.assign(a.bytes.begin() + begin * k, a.bytes.begin() + end * k);
  out.scales.resize(static_cast<std::size_t>(count * kb));
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t c = 0; c < kb; ++c) {
      out.scales[static_cast<std::size_t>(kernels::gemm::a_scale_offset(major, count, kb, i, c))] =
          a.scales[static_cast<std::size_t>(kernels::gemm::a_scale_offset(major, rows, kb, begin + i, c))];
    }
  }
  return out;
}

}  // namespace kbench::testing
