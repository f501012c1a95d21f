// The host reference of RoPE, in fp64: frequencies, the cos/sin cache kbench builds and the
// rotation itself, written from the formulas (shared/spec/rope.md), sharing no code with the
// kernel (kernels/rope).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace kbench::rope_reference {

struct Frequencies {
  double theta = 1e4;
  double scale = 1.0;
  bool llama31 = false;  // Llama 3.1's smoothing between the long and short wavelengths
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  double old_context_len = 8192.0;
};

// f_j of pair j: theta^(-2j/rotary_dim) divided by scale; with llama31, wavelengths above
// old_context_len / low_freq_factor are scaled, those below old_context_len / high_freq_factor are
// kept, and the ones between blend linearly in frequency.
[[nodiscard]] double pair_frequency(const Frequencies& f, int pair, int rotary_dim);

// Llama 3.1's blend as the kernel takes it: smooth = clamp(base * a + b, 0, 1) (a = b = 0 plain).
struct SmoothCoefficients {
  double a = 0.0;
  double b = 0.0;
};
[[nodiscard]] SmoothCoefficients smooth_coefficients(const Frequencies& f);

// fp32 [rows][rotary_dim], row = position: cos of pair j in column j, its sin in rotary_dim/2 + j.
[[nodiscard]] std::vector<float> cos_sin_cache(const Frequencies& f, int64_t rows, int rotary_dim);

struct Rotation {
  double cos = 1.0;
  double sin = 0.0;
};
// The rotation of pair `pair` at `position`.
using RotationOf = std::function<Rotation(int64_t position, int pair)>;

[[nodiscard]] RotationOf computed_rotation(const Frequencies& f, int rotary_dim);
// Reads `cache` (cos_sin_cache's layout).
[[nodiscard]] RotationOf cached_rotation(std::span<const float> cache, int rotary_dim);

struct Heads {
  int64_t tokens = 0;
  int heads = 0;
  int head_dim = 0;
  int rotary_dim = 0;
  bool interleave = false;  // pairs (2j, 2j+1); else NeoX pairs (j, j + rotary_dim/2)
};

// x [tokens][heads][head_dim] rotated by each token's position (positions [tokens]).
[[nodiscard]] std::vector<float> rotate(std::span<const float> x, const Heads& shape, std::span<const int64_t> positions,
                                        const RotationOf& rotation);

}  // namespace kbench::rope_reference
