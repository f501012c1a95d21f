#include "routines/rope/rope_reference.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kbench::rope_reference {

SmoothCoefficients smooth_coefficients(const Frequencies& f) {
  if (!f.llama31) return {};
  return {f.old_context_len / (2.0 * std::numbers::pi * (f.high_freq_factor - f.low_freq_factor)),
          -1.0 / (f.high_freq_factor / f.low_freq_factor - 1.0)};
}

double pair_frequency(const Frequencies& f, int pair, int rotary_dim) {
  const double base = std::pow(f.theta, -2.0 * pair / rotary_dim);
  if (!f.llama31) return base / f.scale;
  // By wavelength, as Llama 3.1 states it (smooth_coefficients is the same rule in frequency).
  const double wavelength = 2.0 * std::numbers::pi / base;
  const double long_wavelength = f.old_context_len / f.low_freq_factor;
  const double short_wavelength = f.old_context_len / f.high_freq_factor;
  if (wavelength > long_wavelength) return base / f.scale;
  if (wavelength < short_wavelength) return base;
  const double smooth = (f.old_context_len / wavelength - f.low_freq_factor) / (f.high_freq_factor - f.low_freq_factor);
  return (1.0 - smooth) * base / f.scale + smooth * base;
}

std::vector<float> cos_sin_cache(const Frequencies& f, int64_t rows, int rotary_dim) {
  const int half = rotary_dim / 2;
  std::vector<float> cache(static_cast<std::size_t>(rows * rotary_dim));
  for (int64_t position = 0; position < rows; ++position) {
    for (int pair = 0; pair < half; ++pair) {
      const double angle = static_cast<double>(position) * pair_frequency(f, pair, rotary_dim);
      cache[static_cast<std::size_t>(position * rotary_dim + pair)] = static_cast<float>(std::cos(angle));
      cache[static_cast<std::size_t>(position * rotary_dim + half + pair)] = static_cast<float>(std::sin(angle));
    }
  }
  return cache;
}

RotationOf computed_rotation(const Frequencies& f, int rotary_dim) {
  std::vector<double> frequencies(static_cast<std::size_t>(rotary_dim / 2));
  for (int pair = 0; pair < rotary_dim / 2; ++pair) frequencies[static_cast<std::size_t>(pair)] = pair_frequency(f, pair, rotary_dim);
  return [frequencies = std::move(frequencies)](int64_t position, int pair) {
    const double angle = static_cast<double>(position) * frequencies[static_cast<std::size_t>(pair)];
    return Rotation{std::cos(angle), std::sin(angle)};
  };
}

RotationOf cached_rotation(std::span<const float> cache, int rotary_dim) {
  return [cache, rotary_dim](int64_t position, int pair) {
    const std::size_t row = static_cast<std::size_t>(position * rotary_dim);
    return Rotation{cache[row + static_cast<std::size_t>(pair)], cache[row + static_cast<std::size_t>(rotary_dim / 2 + pair)]};
  };
}

std::vector<float> rotate(std::span<const float> x, const Heads& shape, std::span<const int64_t> positions,
                          const RotationOf& rotation) {
  std::vector<float> out(x.begin(), x.end());  // dims [rotary_dim, head_dim) stay as they are
  const int half = shape.rotary_dim / 2;
  for (int64_t token = 0; token < shape.tokens; ++token) {
    const int64_t position = positions[static_cast<std::size_t>(token)];
    for (int head = 0; head < shape.heads; ++head) {
      const std::size_t row = static_cast<std::size_t>((token * shape.heads + head) * shape.head_dim);
      for (int pair = 0; pair < half; ++pair) {
        const std::size_t first = row + static_cast<std::size_t>(shape.interleave ? 2 * pair : pair);
        const std::size_t second = row + static_cast<std::size_t>(shape.interleave ? 2 * pair + 1 : pair + half);
        const Rotation r = rotation(position, pair);
        const double a = x[first];
        const double b = x[second];
        out[first] = static_cast<float>(a * r.cos - b * r.sin);
        out[second] = static_cast<float>(b * r.cos + a * r.sin);
      }
    }
  }
  return out;
}

std::vector<float> scaled(std::vector<float> x, double scale) {
  for (float& v : x) v = static_cast<float>(v * scale);
  return x;
}

int64_t cache_offset(const PagedCache& c, int64_t page, int entry, int head, int element) {
  const int64_t row = c.hnd ? (page * c.heads + head) * c.page_size + entry : (page * c.page_size + entry) * c.heads + head;
  return row * c.head_dim + element;
}

PageEntry append_entry(std::span<const int32_t> kv_indices, int32_t request_first_page, int page_size, int32_t position) {
  const int64_t slot = static_cast<int64_t>(request_first_page) * page_size + position;
  return {kv_indices[static_cast<std::size_t>(slot / page_size)], static_cast<int>(slot % page_size)};
}

PagedCaches append_to_cache(const PagedCache& cache, const PagedAppend& where, std::span<const float> k_rope,
                            std::span<const float> k_nope, std::span<const float> v, int rope_dim, float untouched) {
  const auto elements = static_cast<std::size_t>(cache.elements());
  PagedCaches out{std::vector<float>(elements, untouched), std::vector<float>(elements, untouched)};
  const int no_rope_dim = cache.head_dim - rope_dim;
  for (std::size_t token = 0; token < where.batch_indices.size(); ++token) {
    const int32_t request = where.batch_indices[token];
    if (request < 0) continue;
    const PageEntry e = append_entry(where.kv_indices, where.kv_indptr[static_cast<std::size_t>(request)], cache.page_size,
                                     where.positions[token]);
    for (int head = 0; head < cache.heads; ++head) {
      const std::size_t row = token * static_cast<std::size_t>(cache.heads) + static_cast<std::size_t>(head);
      for (int d = 0; d < cache.head_dim; ++d) {
        const auto at = static_cast<std::size_t>(cache_offset(cache, e.page, e.entry, head, d));
        out.k[at] = d < rope_dim ? k_rope[row * static_cast<std::size_t>(rope_dim) + static_cast<std::size_t>(d)]
                                 : k_nope[row * static_cast<std::size_t>(no_rope_dim) + static_cast<std::size_t>(d - rope_dim)];
        out.v[at] = v[row * static_cast<std::size_t>(cache.head_dim) + static_cast<std::size_t>(d)];
      }
    }
  }
  return out;
}

}  // namespace kbench::rope_reference
