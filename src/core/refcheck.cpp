#include "core/refcheck.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kbench {
namespace {

void require_same_size(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) {
    throw std::invalid_argument("refcheck: reference has " + std::to_string(a.size()) + " elements, output " +
                                std::to_string(b.size()));
  }
}

// Shared by both comparisons: `allowed(ref)` is the largest accepted |out - ref|.
template <class Allowed, class Target>
Comparison compare(std::string tensor, Tolerance tolerance, std::span<const float> reference,
                   std::span<const float> output, Target target, Allowed allowed) {
  require_same_size(reference, output);
  Comparison c{std::move(tensor), tolerance, static_cast<int64_t>(reference.size()), 0, 0.0};
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double ref = target(static_cast<double>(reference[i]));
    const double out = output[i];
    if (!std::isfinite(out) || !std::isfinite(ref)) {
      // Matching infinities agree; everything else non-finite is a mismatch.
      if (!(std::isinf(out) && out == ref)) ++c.mismatches;
      continue;
    }
    const double err = std::fabs(out - ref);
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (err > allowed(ref)) ++c.mismatches;
  }
  return c;
}

}  // namespace

Comparison compare_isclose(std::string tensor, std::span<const float> reference, std::span<const float> output,
                           Tolerance tol) {
  return compare(std::move(tensor), tol, reference, output, [](double r) { return r; },
                 [tol](double r) { return tol.atol + tol.rtol * std::fabs(r); });
}

double fp8_max_finite(DType format) {
  switch (format) {
    case DType::fp8_e4m3: return 448.0;
    case DType::fp8_e5m2: return 57344.0;
    default: throw std::invalid_argument("fp8_max_finite: not an fp8 format");
  }
}

double fp8_grid_step(DType format, double x) {
  int mantissa_bits = 0;
  int min_normal_exponent = 0;
  switch (format) {
    case DType::fp8_e4m3: mantissa_bits = 3; min_normal_exponent = -6; break;
    case DType::fp8_e5m2: mantissa_bits = 2; min_normal_exponent = -14; break;
    default: throw std::invalid_argument("fp8_grid_step: not an fp8 format");
  }
  const double magnitude = std::fabs(x);
  int exponent = min_normal_exponent;  // subnormals share the smallest normal binade's step
  if (magnitude >= std::ldexp(1.0, min_normal_exponent)) exponent = std::ilogb(magnitude);
  return std::ldexp(1.0, exponent - mantissa_bits);
}

Comparison compare_quantized(std::string tensor, std::span<const float> reference, std::span<const float> output,
                             Tolerance tol, DType format) {
  const double limit = fp8_max_finite(format);
  return compare(std::move(tensor), tol, reference, output, [limit](double r) { return std::clamp(r, -limit, limit); },
                 [tol, format](double r) { return tol.atol + tol.rtol * std::fabs(r) + fp8_grid_step(format, r); });
}

double cosine_similarity(std::span<const float> a, std::span<const float> b) {
  require_same_size(a, b);
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return (na == nb) ? 1.0 : 0.0;
  return dot / std::sqrt(na * nb);
}

}  // namespace kbench
