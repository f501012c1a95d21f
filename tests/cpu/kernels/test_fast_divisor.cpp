// FastDivisor (kernels/common/fast_divisor.hpp) against the hardware divide: every divisor up to
// 1024 (page sizes and more) and the largest 32-bit ones it takes, over the numerators where an
// off-by-one would show (around each multiple of d) and the top of its range.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/common/fast_divisor.hpp"

namespace {

using kbench::kernels::FastDivisor;

void expect_divides(uint32_t d) {
  const FastDivisor f = FastDivisor::make(d);
  constexpr uint32_t kLimit = (1u << 31) - 1;  // divide's range: n < 2^31
  std::vector<uint32_t> numerators = {0, 1, 2, kLimit, kLimit - 1, kLimit - d + 1};
  for (uint64_t q : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{1000}, uint64_t{kLimit} / d}) {
    for (int64_t delta : {-1, 0, 1}) {
      const int64_t n = static_cast<int64_t>(q * d) + delta;
      if (n >= 0 && n <= kLimit) numerators.push_back(static_cast<uint32_t>(n));
    }
  }
  for (uint32_t n : numerators) ASSERT_EQ(f.divide(n), n / d) << "n=" << n << " d=" << d;
}

TEST(FastDivisor, MatchesDivisionForEveryDivisorUpTo1024) {
  for (uint32_t d = 1; d <= 1024; ++d) expect_divides(d);
}

TEST(FastDivisor, MatchesDivisionForLargeDivisors) {
  for (uint32_t d : {65535u, 65536u, 1000003u, (1u << 30) - 1, 1u << 30, (1u << 31) - 1}) expect_divides(d);
}

TEST(FastDivisor, EveryNumeratorForSmallDivisors) {
  for (uint32_t d : {1u, 3u, 7u, 12u, 48u, 100u}) {
    const FastDivisor f = FastDivisor::make(d);
    for (uint32_t n = 0; n < 200000; ++n) ASSERT_EQ(f.divide(n), n / d) << "n=" << n << " d=" << d;
  }
}

}  // namespace
