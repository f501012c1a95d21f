// The laws of the sampling family's random inputs, as host/device functions of (seed, row, column)
// so that the kernels that fill tensors and the CPU tests that document the laws compute the same
// numbers.
//
//  flat   (the reference's): probabilities u / sum(u), u uniform in [0, 1) with 24 bits (torch.rand);
//         max / mean ~ 2, so top-p 0.9 keeps ~90% of the vocabulary. Logits N(0, 1) (fill_normal).
//  peaked (a language model's tail): Zipf's law, the j-th most likely token of a row has probability
//         proportional to j^-1.5; each row places the ranks by its own affine permutation of the
//         vocabulary (rank = (a * column + b) mod cols, a coprime to cols). Top-p 0.9 keeps 54 to 57
//         tokens and the 50 most likely hold 89% of the mass at any vocabulary from 32000 to 262144
//         (tests/cpu/sampling). Logits are log-probabilities up to a constant: -1.5 ln(rank + 1).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KBENCH_HD __host__ __device__ __forceinline__
#else
#define KBENCH_HD inline
#endif

namespace kbench::kernels::sampling {

inline constexpr double kZipfExponent = 1.5;

KBENCH_HD uint64_t splitmix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A 24-bit uniform in [0, 1) for element `index` of the stream `seed` (as torch.rand: 24 bits).
KBENCH_HD float uniform24(uint64_t seed, uint64_t index) {
  return static_cast<float>(splitmix(splitmix(seed) + index) >> 40) * 0x1p-24f;
}

KBENCH_HD uint64_t gcd64(uint64_t a, uint64_t b) {
  while (b != 0) {
    const uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Row `row`'s permutation of the ranks: rank(column) = (a * column + b) mod cols.
struct ZipfPlacement {
  uint64_t a = 1;
  uint64_t b = 0;
  uint64_t cols = 1;

  KBENCH_HD static ZipfPlacement of_row(uint64_t seed, uint64_t row, uint64_t cols) {
    ZipfPlacement p;
    p.cols = cols;
    const uint64_t h = splitmix(splitmix(seed ^ 0x5A17F00Dull) + row);
    p.a = cols > 1 ? 1 + (h >> 20) % (cols - 1) : 1;
    while (gcd64(p.a, cols) != 1) p.a = p.a % (cols - 1) + 1;  // 1 is coprime to everything
    p.b = splitmix(h) % cols;
    return p;
  }
  KBENCH_HD uint64_t rank(uint64_t column) const { return (a % cols * (column % cols) + b) % cols; }
};

}  // namespace kbench::kernels::sampling
