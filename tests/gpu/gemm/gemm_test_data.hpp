// Host inputs the GEMM family's kernel tests draw (deterministic by seed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace kbench::testing {

// `count` values of N(0, stddev^2).
inline std::vector<float> normals(std::size_t count, float stddev, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(count);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace kbench::testing
