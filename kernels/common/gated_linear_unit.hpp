// The gated linear units of MoE experts (moe.md): act = f(gate) * up, f = SiLU x / (1 + e^-x)
// (SwiGLU) or the exact GELU x/2 (1 + erf(x / sqrt 2)) (GeGLU), in fp32. Host and device alike (on
// the host, expf and erff are its library's).
#pragma once

#include <cmath>

namespace kbench::kernels {

enum class GatedLinearUnit { swiglu, geglu };

#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
float gated_linear_unit(GatedLinearUnit unit, float up, float gate) {
  const float f = unit == GatedLinearUnit::swiglu ? gate / (1.0f + expf(-gate))
                                                  : 0.5f * gate * (1.0f + erff(gate * 0.70710678118654752f));
  return f * up;
}

}  // namespace kbench::kernels
