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

// The FP8 routines' outputs before rounding: x times the quant scale (the rounding to fp8 is the
// refcheck's business: core/refcheck compare_quantized).
[[nodiscard]] std::vector<float> scaled(std::vector<float> x, double scale);

// The paged KV cache of rope_quantize_fp8_append_paged_kv_cache: [pages][page_size][heads][head_dim]
// (NHD) or [pages][heads][page_size][head_dim] (HND).
struct PagedCache {
  int64_t pages = 0;
  int page_size = 1;
  int heads = 1;
  int head_dim = 0;
  bool hnd = false;
  [[nodiscard]] int64_t elements() const { return pages * page_size * heads * head_dim; }
};

// Element `element` of head `head` at entry `entry` of page `page`.
[[nodiscard]] int64_t cache_offset(const PagedCache& cache, int64_t page, int entry, int head, int element);

// Where an appended token goes: slot kv_indptr[request] * page_size + position, i.e. entry
// slot % page_size of page kv_indices[slot / page_size].
struct PageEntry {
  int64_t page = 0;
  int entry = 0;
};
[[nodiscard]] PageEntry append_entry(std::span<const int32_t> kv_indices, int32_t request_first_page, int page_size,
                                     int32_t position);

// The append itself: K head vectors [k_rope | k_nope] (rope dims first) and V head vectors of every
// token whose batch index is not negative written into caches that hold `untouched` elsewhere.
// k_rope [tokens][heads][rope_dim], k_nope [tokens][heads][no_rope_dim], v [tokens][heads][head_dim].
struct PagedAppend {
  std::span<const int32_t> kv_indices;
  std::span<const int32_t> kv_indptr;
  std::span<const int32_t> batch_indices;
  std::span<const int32_t> positions;
};
struct PagedCaches {
  std::vector<float> k;
  std::vector<float> v;
};
[[nodiscard]] PagedCaches append_to_cache(const PagedCache& cache, const PagedAppend& where, std::span<const float> k_rope,
                                          std::span<const float> k_nope, std::span<const float> v, int rope_dim,
                                          float untouched);

}  // namespace kbench::rope_reference
