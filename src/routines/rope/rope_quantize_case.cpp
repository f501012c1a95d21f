#include "routines/rope/rope_quantize_case.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/device_tensors.hpp"

namespace kbench {
namespace {

enum TensorId { kQRope = 0, kKRope = 1, kQNope = 2, kKNope = 3, kV = 4 };

// The outputs are fp8: compare_quantized allows one step of the format's grid (the fp32 rotation
// and the fp64 reference may fall on either side of a rounding boundary); beyond that only the
// fp32 arithmetic's own error.
constexpr Tolerance kTolerance{1e-5, 1e-5};

std::vector<int32_t> to_int32(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

struct PagedTables {
  std::vector<int32_t> kv_indices, kv_indptr, batch_indices, positions;
};

// The reference's tables: contiguous pages (kv_indices = arange), kv_indptr = i * pages per
// request, each token's request and its index within it.
PagedTables paged_tables(const RopeProblem& p) {
  PagedTables t;
  t.kv_indices.resize(static_cast<std::size_t>(p.pages()));
  for (std::size_t i = 0; i < t.kv_indices.size(); ++i) t.kv_indices[i] = static_cast<int32_t>(i);
  for (int64_t b = 0; b <= p.batch_size; ++b) t.kv_indptr.push_back(static_cast<int32_t>(b * p.pages_per_request()));
  for (int64_t token = 0; token < p.tokens(); ++token) {
    t.batch_indices.push_back(static_cast<int32_t>(token / p.seq_len));
    t.positions.push_back(static_cast<int32_t>(token % p.seq_len));
  }
  return t;
}

}  // namespace

std::size_t RopeQuantizeCase::rope_elements(int heads) const {
  return static_cast<std::size_t>(p_.tokens() * heads * p_.rotary_dim);
}
std::size_t RopeQuantizeCase::nope_elements(int heads) const {
  return static_cast<std::size_t>(p_.tokens() * heads * p_.no_rope_dim);
}
std::size_t RopeQuantizeCase::v_elements() const {
  return paged() ? static_cast<std::size_t>(p_.tokens() * p_.k_heads * p_.head_dim) : 0;
}

rope_reference::PagedCache RopeQuantizeCase::cache_shape() const {
  return {paged() ? p_.pages() : 0, p_.page_size, p_.k_heads, p_.rotary_dim + p_.no_rope_dim, p_.hnd};
}

std::size_t RopeQuantizeCase::bytes_per_copy() const {
  const std::size_t b = dtype_size(p_.dtype);
  const std::size_t in = rope_elements(p_.q_heads) + rope_elements(p_.k_heads) + nope_elements(p_.q_heads) +
                         nope_elements(p_.k_heads) + v_elements();
  const std::size_t out = paged() ? rope_elements(p_.q_heads) + nope_elements(p_.q_heads) +
                                        2 * static_cast<std::size_t>(cache_shape().elements())
                                  : rope_elements(p_.q_heads) + rope_elements(p_.k_heads) + nope_elements(p_.q_heads) +
                                        nope_elements(p_.k_heads);
  const auto tokens = static_cast<std::size_t>(p_.tokens());
  const std::size_t tables = paged() ? (static_cast<std::size_t>(p_.pages() + p_.batch_size + 1) + 2 * tokens) * 4 : 0;
  return in * b + out + static_cast<std::size_t>(p_.seq_len * p_.rotary_dim) * sizeof(float) + tokens * 4 + tables;
}

std::vector<TensorInfo> RopeQuantizeCase::tensors() const {
  const int64_t t = p_.tokens();
  const int64_t r = p_.rotary_dim;
  const int64_t nd = p_.no_rope_dim;
  const bool mla = p_.variant == RopeVariant::mla_rope_quantize_fp8;
  std::vector<TensorInfo> result;
  auto heads = [&](const char* name, int64_t h, int64_t d, DType dtype, bool latent) {
    result.push_back(latent ? TensorInfo{name, {t, d}, {d, 1}, dtype} : TensorInfo{name, {t, h, d}, {h * d, d, 1}, dtype});
  };
  heads("q_rope", p_.q_heads, r, p_.dtype, false);
  heads("k_rope", p_.k_heads, r, p_.dtype, mla);
  if (nd > 0) {
    heads("q_nope", p_.q_heads, nd, p_.dtype, false);
    heads("k_nope", p_.k_heads, nd, p_.dtype, mla);
  }
  if (paged()) heads("v", p_.k_heads, p_.head_dim, p_.dtype, false);
  result.push_back({"cos_sin_cache", {p_.seq_len, r}, {r, 1}, DType::float32});
  result.push_back({"pos_ids", {t}, {1}, DType::int32});
  if (paged()) {
    const rope_reference::PagedCache c = cache_shape();
    const std::vector<int64_t> shape = c.hnd ? std::vector<int64_t>{c.pages, c.heads, c.page_size, c.head_dim}
                                             : std::vector<int64_t>{c.pages, c.page_size, c.heads, c.head_dim};
    const std::vector<int64_t> stride = {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1};
    result.push_back({"k_cache", shape, stride, p_.quant_dtype});
    result.push_back({"v_cache", shape, stride, p_.quant_dtype});
    result.push_back({"kv_indices", {c.pages}, {1}, DType::int32});
    result.push_back({"kv_indptr", {p_.batch_size + 1}, {1}, DType::int32});
    result.push_back({"batch_indices", {t}, {1}, DType::int32});
    result.push_back({"positions", {t}, {1}, DType::int32});
    heads("q_rope_out", p_.q_heads, r, p_.quant_dtype, false);
    if (nd > 0) heads("q_nope_out", p_.q_heads, nd, p_.quant_dtype, false);
  } else {
    heads("q_rope_out", p_.q_heads, r, p_.quant_dtype, false);
    heads("k_rope_out", p_.k_heads, r, p_.quant_dtype, mla);
    if (nd > 0) {
      heads("q_nope_out", p_.q_heads, nd, p_.quant_dtype, false);
      heads("k_nope_out", p_.k_heads, nd, p_.quant_dtype, mla);
    }
  }
  return result;
}

void RopeQuantizeCase::describe(const Log& log) const {
  for (const auto& flag : p_.ignored_flags) log.warning("--" + flag + " does not apply to this routine and is ignored");
  log.vverbose("rope_dim = " + std::to_string(p_.rotary_dim) + ", no_rope_dim = " + std::to_string(p_.no_rope_dim) +
               ", quant_scale_q = " + python_float(p_.quant_scale_q) + ", quant_scale_kv = " + python_float(p_.quant_scale_kv));
  log.vverbose("cos_sin_cache: the float32 cos/sin table of rope_theta and rope_scale (one row per position)");
}

void RopeQuantizeCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  const std::vector<int32_t> pos_ids = to_int32(p_.positions());
  const std::vector<float> cache = rope_reference::cos_sin_cache(p_.frequencies, p_.seq_len, p_.rotary_dim);
  const PagedTables tables = paged() ? paged_tables(p_) : PagedTables{};
  const std::size_t b = dtype_size(p_.dtype);
  const std::size_t cache_elements = static_cast<std::size_t>(cache_shape().elements());
  copies_.clear();
  for (int i = 0; i < copies; ++i) {
    Copy c;
    auto input = [&](DeviceBuffer& buffer, std::size_t count, int id) {
      if (count == 0) return;
      buffer = DeviceBuffer(count * b);
      KBENCH_CUDA_CHECK(kernels::fill_normal(buffer.get(), p_.dtype, static_cast<int64_t>(count), tensor_seed(seed, i, id),
                                             0.0f, 1.0f, stream));
    };
    auto output = [&](DeviceBuffer& buffer, std::size_t count) {
      if (count == 0) return;
      buffer = DeviceBuffer(count);  // fp8: one byte an element
      KBENCH_CUDA_CHECK(kernels::poison(buffer.get(), static_cast<int64_t>(count), stream));
    };
    input(c.q_rope, rope_elements(p_.q_heads), kQRope);
    input(c.k_rope, rope_elements(p_.k_heads), kKRope);
    input(c.q_nope, nope_elements(p_.q_heads), kQNope);
    input(c.k_nope, nope_elements(p_.k_heads), kKNope);
    input(c.v, v_elements(), kV);
    output(c.q_rope_out, rope_elements(p_.q_heads));
    output(c.q_nope_out, nope_elements(p_.q_heads));
    if (paged()) {
      output(c.k_cache, cache_elements);
      output(c.v_cache, cache_elements);
      c.kv_indices = upload(tables.kv_indices, stream);
      c.kv_indptr = upload(tables.kv_indptr, stream);
      c.batch_indices = upload(tables.batch_indices, stream);
      c.positions = upload(tables.positions, stream);
    } else {
      output(c.k_rope_out, rope_elements(p_.k_heads));
      output(c.k_nope_out, nope_elements(p_.k_heads));
    }
    c.cos_sin_cache = upload(cache, stream);
    c.pos_ids = upload(pos_ids, stream);
    copies_.push_back(std::move(c));
  }
  // The host tables uploaded above must outlive the copies.
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

kernels::RopeQuantizeParams RopeQuantizeCase::shape() const {
  kernels::RopeQuantizeParams k;
  k.cache_rows = p_.seq_len;
  k.tokens = p_.tokens();
  k.q_heads = p_.q_heads;
  k.k_heads = p_.k_heads;
  k.rope_dim = p_.rotary_dim;
  k.no_rope_dim = p_.no_rope_dim;
  k.interleave = p_.interleave;
  k.quant_scale_q = static_cast<float>(p_.quant_scale_q);
  k.quant_scale_kv = static_cast<float>(p_.quant_scale_kv);
  k.dtype = p_.dtype;
  k.quant_dtype = p_.quant_dtype;
  if (paged()) {
    k.pages = p_.pages();
    k.page_size = p_.page_size;
    k.hnd = p_.hnd;
  }
  k.enable_pdl = p_.enable_pdl;
  return k;
}

kernels::RopeQuantizeParams RopeQuantizeCase::params(int copy_index) const {
  const Copy& c = copies_.at(static_cast<std::size_t>(copy_index));
  kernels::RopeQuantizeParams k = shape();
  k.q_rope = c.q_rope.get();
  k.k_rope = c.k_rope.get();
  k.q_nope = c.q_nope.get();
  k.k_nope = c.k_nope.get();
  k.q_rope_out = c.q_rope_out.get();
  k.k_rope_out = c.k_rope_out.get();
  k.q_nope_out = c.q_nope_out.get();
  k.k_nope_out = c.k_nope_out.get();
  k.cos_sin_cache = c.cos_sin_cache.as<float>();
  k.pos_ids = c.pos_ids.as<int32_t>();
  if (paged()) {
    k.v = c.v.get();
    k.k_cache = c.k_cache.get();
    k.v_cache = c.v_cache.get();
    k.kv_indices = c.kv_indices.as<int32_t>();
    k.kv_indptr = c.kv_indptr.as<int32_t>();
    k.batch_indices = c.batch_indices.as<int32_t>();
    k.positions = c.positions.as<int32_t>();
  }
  return k;
}

std::vector<CheckedOutput> RopeQuantizeCase::outputs() const {
  const kernels::RopeQuantizeParams k = params(0);
  const DType q = p_.quant_dtype;
  std::vector<CheckedOutput> result = {{"q_rope_out", k.q_rope_out, q, rope_elements(p_.q_heads), kTolerance}};
  if (p_.no_rope_dim > 0) result.push_back({"q_nope_out", k.q_nope_out, q, nope_elements(p_.q_heads), kTolerance});
  if (paged()) {
    const auto elements = static_cast<std::size_t>(cache_shape().elements());
    result.push_back({"k_cache", k.k_cache, q, elements, kTolerance});
    result.push_back({"v_cache", k.v_cache, q, elements, kTolerance});
  } else {
    result.push_back({"k_rope_out", k.k_rope_out, q, rope_elements(p_.k_heads), kTolerance});
    if (p_.no_rope_dim > 0) result.push_back({"k_nope_out", k.k_nope_out, q, nope_elements(p_.k_heads), kTolerance});
  }
  return result;
}

std::vector<std::vector<float>> RopeQuantizeCase::reference(cudaStream_t stream) {
  const kernels::RopeQuantizeParams k = params(0);
  const std::vector<int64_t> positions = p_.positions();
  const std::vector<float> cache = read_as_floats(k.cos_sin_cache, DType::float32,
                                                  static_cast<std::size_t>(p_.seq_len * p_.rotary_dim), stream);
  const rope_reference::RotationOf rotation = rope_reference::cached_rotation(cache, p_.rotary_dim);
  auto rotated = [&](const void* input, int heads, double scale) {
    const rope_reference::Heads shape{p_.tokens(), heads, p_.rotary_dim, p_.rotary_dim, p_.interleave};
    return rope_reference::scaled(
        rope_reference::rotate(read_as_floats(input, p_.dtype, rope_elements(heads), stream), shape, positions, rotation),
        scale);
  };
  auto nope = [&](const void* input, int heads, double scale) {
    return rope_reference::scaled(read_as_floats(input, p_.dtype, nope_elements(heads), stream), scale);
  };
  std::vector<std::vector<float>> result = {rotated(k.q_rope, p_.q_heads, p_.quant_scale_q)};
  if (p_.no_rope_dim > 0) result.push_back(nope(k.q_nope, p_.q_heads, p_.quant_scale_q));
  const std::vector<float> k_rope = rotated(k.k_rope, p_.k_heads, p_.quant_scale_kv);
  const std::vector<float> k_nope = p_.no_rope_dim > 0 ? nope(k.k_nope, p_.k_heads, p_.quant_scale_kv) : std::vector<float>{};
  if (paged()) {
    const PagedTables t = paged_tables(p_);
    const std::vector<float> v = rope_reference::scaled(read_as_floats(k.v, p_.dtype, v_elements(), stream), p_.quant_scale_kv);
    rope_reference::PagedCaches caches =
        rope_reference::append_to_cache(cache_shape(), {t.kv_indices, t.kv_indptr, t.batch_indices, t.positions}, k_rope,
                                        k_nope, v, p_.rotary_dim, std::numeric_limits<float>::quiet_NaN());
    result.push_back(std::move(caches.k));
    result.push_back(std::move(caches.v));
  } else {
    result.push_back(k_rope);
    if (p_.no_rope_dim > 0) result.push_back(k_nope);
  }
  return result;
}

std::vector<Comparison> RopeQuantizeCase::compare(const std::vector<CheckedOutput>& outputs,
                                                  const std::vector<std::vector<float>>& expected,
                                                  const std::vector<std::vector<float>>& got) const {
  std::vector<Comparison> result;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const CheckedOutput& out = outputs[i];
    const bool cache = out.name == "k_cache" || out.name == "v_cache";
    if (!cache) {
      result.push_back(compare_quantized(out.name, expected[i], got[i], out.tolerance, out.dtype));
      continue;
    }
    // Slots of appended tokens against the reference; the rest must still be the poison (NaN).
    std::vector<float> owned_expected, owned_got;
    Comparison untouched;
    untouched.tensor = out.name + " (slots no appended token owns)";
    untouched.rule = "an element outside the appended tokens' slots was written";
    for (std::size_t e = 0; e < expected[i].size(); ++e) {
      if (std::isnan(expected[i][e])) {
        ++untouched.total;
        if (!std::isnan(got[i][e])) ++untouched.mismatches;
      } else {
        owned_expected.push_back(expected[i][e]);
        owned_got.push_back(got[i][e]);
      }
    }
    result.push_back(compare_quantized(out.name, owned_expected, owned_got, out.tolerance, out.dtype));
    // A cache that the appended tokens fill entirely has no untouched slot to check.
    if (untouched.total > 0) result.push_back(untouched);
  }
  return result;
}

}  // namespace kbench
