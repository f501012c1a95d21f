// MoE routing arithmetic shared by the routing kernel and its host reference, written so both give
// bit-identical results: only correctly rounded IEEE operations (add, multiply, divide, fma, rint,
// ldexp), one at a time, never contracted. The device forms use the explicit round-to-nearest
// intrinsics (__fadd_rn, ...), which nvcc never fuses; the host forms use std::fma where a fused
// multiply-add is meant, and plain operators otherwise (kbench's host builds do not enable FMA
// contraction: no -march, no -ffp-contract=fast). CUDA's own expf is not bit-identical to the
// host's, hence routing_exp: Cephes' single-precision polynomial (max error about 1 ulp on the
// reduced range), evaluated with fma.
#pragma once

#include <cstdint>
#include <cstring>
#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

#if defined(__CUDACC__)
#define KBENCH_MOE_HD __host__ __device__ __forceinline__
#else
#define KBENCH_MOE_HD inline
#endif

namespace kbench::kernels::moe {

KBENCH_MOE_HD float routing_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
KBENCH_MOE_HD float routing_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
KBENCH_MOE_HD float routing_div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
KBENCH_MOE_HD float routing_fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// e^x. Below -103 the result is 0 (it would be under the smallest denormal); above 88 it is
// clamped (sigmoid and softmax here never need more).
KBENCH_MOE_HD float routing_exp(float x) {
  if (x < -103.0f) return 0.0f;
  if (x > 88.0f) x = 88.0f;
#if defined(__CUDA_ARCH__)
  const float n = rintf(routing_mul(x, 1.44269504088896341f));
#else
  const float n = std::nearbyint(routing_mul(x, 1.44269504088896341f));
#endif
  // x - n ln2 with ln2 split in two so the reduction is exact to float precision.
  float r = routing_fma(-n, 0.693359375f, x);
  r = routing_fma(-n, -2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = routing_fma(p, r, 1.3981999507e-3f);
  p = routing_fma(p, r, 8.3334519073e-3f);
  p = routing_fma(p, r, 4.1665795894e-2f);
  p = routing_fma(p, r, 1.6666665459e-1f);
  p = routing_fma(p, r, 5.0000001201e-1f);
  const float y = routing_add(routing_fma(p, routing_mul(r, r), r), 1.0f);
#if defined(__CUDA_ARCH__)
  return ldexpf(y, static_cast<int>(n));
#else
  return std::ldexp(y, static_cast<int>(n));
#endif
}

KBENCH_MOE_HD float routing_sigmoid(float x) { return routing_div(1.0f, routing_add(1.0f, routing_exp(-x))); }

// bfloat16 bits to float (exact).
KBENCH_MOE_HD float routing_bf16_to_float(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
#if defined(__CUDA_ARCH__)
  return __uint_as_float(wide);
#else
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
#endif
}

// The selection order every method uses: larger score first, equal scores by lower expert (or
// group) id, so ties are broken deterministically and identically on host and device.
KBENCH_MOE_HD bool routing_before(float a_score, int a_id, float b_score, int b_id) {
  return a_score > b_score || (a_score == b_score && a_id < b_id);
}

// DeepSeek-V3's normalisation epsilon (moe.md: weight = s / (sum s + 1e-20) * scaling factor).
inline constexpr float kDeepSeekWeightEpsilon = 1e-20f;

}  // namespace kbench::kernels::moe
