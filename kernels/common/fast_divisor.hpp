// Division by a divisor fixed at launch without a hardware divide: n / d as a multiply-high, an
// add and a shift (Granlund-Montgomery), for n < 2^31. A kernel that divides per element by a
// runtime value (a page size, say) spends ~20 instructions on each `/` and `%`; the host makes the
// divisor once.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KBENCH_HOST_DEVICE __host__ __device__
#else
#define KBENCH_HOST_DEVICE
#endif

namespace kbench::kernels {

struct FastDivisor {
  uint32_t divisor = 1;
  uint32_t multiplier = 1;  // 2^32 (2^shift - d) / d + 1, truncated to 32 bits
  uint32_t shift = 0;       // ceil(log2(d))

  // d >= 1.
  [[nodiscard]] static constexpr FastDivisor make(uint32_t d) {
    FastDivisor f;
    f.divisor = d;
    while ((uint64_t{1} << f.shift) < d) ++f.shift;
    f.multiplier = static_cast<uint32_t>((uint64_t{1} << 32) * ((uint64_t{1} << f.shift) - d) / d + 1);
    return f;
  }

  // n / divisor for n < 2^31 (the high product is below n, so the sum stays within 32 bits).
  [[nodiscard]] KBENCH_HOST_DEVICE constexpr uint32_t divide(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, multiplier);
#else
    const uint32_t high = static_cast<uint32_t>((static_cast<uint64_t>(n) * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }
};

}  // namespace kbench::kernels

#undef KBENCH_HOST_DEVICE
