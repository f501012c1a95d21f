// Comparison of a backend's output with kbench's fp32 reference, as the reference tool counts it
// (torch.isclose: |out - ref| <= atol + rtol * |ref|; any mismatch fails), plus cosine similarity
// for the GEMM families. Host-side, on fp32 copies: slow but obviously right.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kbench/dtype.hpp"

namespace kbench {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

struct Comparison {
  std::string tensor;         // which output ("output", "residual")
  Tolerance tolerance;
  int64_t total = 0;
  int64_t mismatches = 0;     // NaN/Inf where the reference is finite count here too
  double max_abs_error = 0;   // over finite pairs
  std::string rule;           // a check by a rule, not by closeness (a sampled id in its filtered set):
                              // what a mismatch breaks, printed instead of the tolerance
  [[nodiscard]] double mismatch_percent() const { return total == 0 ? 0.0 : 100.0 * mismatches / total; }
};

[[nodiscard]] Comparison compare_isclose(std::string tensor, std::span<const float> reference,
                                         std::span<const float> output, Tolerance tolerance);

// For outputs stored in an fp8 format: `reference` holds the exact (unrounded) values. The output
// may differ from them by the tolerance plus one step of the format's grid at that magnitude (a
// value near a rounding boundary may round either way), after saturation to the format's range.
[[nodiscard]] Comparison compare_quantized(std::string tensor, std::span<const float> reference,
                                           std::span<const float> output, Tolerance tolerance, DType format);

// Distance between neighbouring values of an fp8 format around magnitude |x|.
[[nodiscard]] double fp8_grid_step(DType format, double x);
[[nodiscard]] double fp8_max_finite(DType format);

[[nodiscard]] double cosine_similarity(std::span<const float> a, std::span<const float> b);

struct RefcheckResult {
  std::vector<Comparison> comparisons;
  [[nodiscard]] bool passed() const {
    for (const auto& c : comparisons) {
      if (c.mismatches > 0 || c.total == 0) return false;
    }
    return !comparisons.empty();
  }
};

}  // namespace kbench
