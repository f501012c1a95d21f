#include "routines/rope/rope_case.hpp"

#include <numeric>
#include <stdexcept>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/device_tensors.hpp"

namespace kbench {
namespace {

enum TensorId { kQ = 0, kK = 1 };

// fp16 keeps 11 bits, bf16 8: the output's own rounding plus the kernel's fp32 angle
// (position * f_j rounded, up to ~2^-24 * position radians) against the fp64 reference.
Tolerance tolerance_of(DType dtype) { return dtype == DType::bfloat16 ? Tolerance{1.6e-2, 1.6e-2} : Tolerance{4e-3, 4e-3}; }

}  // namespace

kernels::RopePositions RopeProblem::position_source() const {
  switch (variant) {
    case RopeVariant::rope:
    case RopeVariant::llama31_rope: return kernels::RopePositions::request_offsets;
    case RopeVariant::rope_pos_ids:
    case RopeVariant::llama31_rope_pos_ids:
    case RopeVariant::rope_quantize_fp8:
    case RopeVariant::mla_rope_quantize_fp8:
    case RopeVariant::rope_quantize_fp8_append_paged_kv_cache: return kernels::RopePositions::pos_ids;
    case RopeVariant::cos_sin_cache: return kernels::RopePositions::positions_i64;
  }
  throw std::logic_error("unknown RoPE variant");
}

std::vector<int64_t> RopeProblem::positions() const {
  std::vector<int64_t> result(static_cast<std::size_t>(tokens()));
  for (std::size_t token = 0; token < result.size(); ++token) result[token] = static_cast<int64_t>(token) % seq_len;
  return result;
}

kernels::RopeParams RopeProblem::shape() const {
  kernels::RopeParams s;
  s.position_source = position_source();
  s.tokens = tokens();
  s.requests = batch_size;
  s.cache_rows = variant == RopeVariant::cos_sin_cache ? seq_len : 0;
  s.q_heads = q_heads;
  s.k_heads = k_heads;
  s.head_dim = head_dim;
  s.rotary_dim = rotary_dim;
  s.interleave = interleave;
  s.rope_theta = static_cast<float>(frequencies.theta);
  s.rope_scale = static_cast<float>(frequencies.scale);
  const rope_reference::SmoothCoefficients smooth = rope_reference::smooth_coefficients(frequencies);
  s.smooth_a = static_cast<float>(smooth.a);
  s.smooth_b = static_cast<float>(smooth.b);
  s.dtype = dtype;
  return s;
}

double rope_bytes(const RopeProblem& p) {
  const double t = static_cast<double>(p.tokens());
  const double b = static_cast<double>(dtype_size(p.dtype));
  const double q_and_k = 2.0 * t * (p.q_heads + p.k_heads) * p.head_dim * b;
  // FP8 routines: bq = 1, r = the rope dim, nd = the unrotated dims, the cache (S, r) in fp32 and
  // the int32 pos_ids.
  const double bq = 1.0;
  const double r = p.rotary_dim;
  const double nd = p.no_rope_dim;
  const double cache_and_positions = 4.0 * static_cast<double>(p.seq_len) * r + 4.0 * t;
  switch (p.variant) {
    case RopeVariant::rope_quantize_fp8:
    case RopeVariant::mla_rope_quantize_fp8:  // k_heads is 1 (the latent k)
      return t * (p.q_heads + p.k_heads) * (r + nd) * (b + bq) + cache_and_positions;
    case RopeVariant::rope_quantize_fp8_append_paged_kv_cache:
      // q in and out, k and v in, the nope parts (q_nope out in fp8), K and V written to the cache.
      return t * p.q_heads * r * (b + bq) + t * p.k_heads * r * b + t * p.k_heads * p.head_dim * b +
             (t * p.q_heads * nd * b + t * p.k_heads * nd * b + t * p.q_heads * nd * bq) + cache_and_positions +
             2.0 * t * p.k_heads * p.head_dim * bq;
    case RopeVariant::rope:
    case RopeVariant::llama31_rope: return q_and_k;
    case RopeVariant::rope_pos_ids:
    case RopeVariant::llama31_rope_pos_ids: return q_and_k + 4.0 * t;
    case RopeVariant::cos_sin_cache:
      return q_and_k + static_cast<double>(p.seq_len) * p.rotary_dim * 4.0 + 8.0 * t;
  }
  throw std::logic_error("unknown RoPE variant");
}

std::size_t RopeCase::q_elements() const { return static_cast<std::size_t>(p_.tokens() * p_.q_heads * p_.head_dim); }
std::size_t RopeCase::k_elements() const { return static_cast<std::size_t>(p_.tokens() * p_.k_heads * p_.head_dim); }

std::size_t RopeCase::bytes_per_copy() const {
  const auto tokens = static_cast<std::size_t>(p_.tokens());
  const auto requests = static_cast<std::size_t>(p_.batch_size);
  std::size_t positions = 0;
  switch (p_.position_source()) {
    case kernels::RopePositions::request_offsets: positions = (2 * requests + 1) * sizeof(int32_t); break;
    case kernels::RopePositions::pos_ids: positions = tokens * sizeof(int32_t); break;
    case kernels::RopePositions::positions_i64:
      positions = tokens * sizeof(int64_t) + static_cast<std::size_t>(p_.seq_len * p_.rotary_dim) * sizeof(float);
      break;
  }
  return 2 * (q_elements() + k_elements()) * dtype_size(p_.dtype) + positions;
}

std::vector<TensorInfo> RopeCase::tensors() const {
  const int64_t t = p_.tokens();
  const int64_t d = p_.head_dim;
  std::vector<TensorInfo> result;
  auto heads = [&](const char* name, int64_t h) {
    // The cos/sin cache form takes q and k flattened to (tokens, heads * head_dim).
    result.push_back(p_.variant == RopeVariant::cos_sin_cache
                         ? TensorInfo{name, {t, h * d}, {h * d, 1}, p_.dtype}
                         : TensorInfo{name, {t, h, d}, {h * d, d, 1}, p_.dtype});
  };
  heads("q", p_.q_heads);
  heads("k", p_.k_heads);
  switch (p_.position_source()) {
    case kernels::RopePositions::request_offsets:
      result.push_back({"indptr", {p_.batch_size + 1}, {1}, DType::int32});
      result.push_back({"offsets", {p_.batch_size}, {1}, DType::int32});
      break;
    case kernels::RopePositions::pos_ids: result.push_back({"pos_ids", {t}, {1}, DType::int32}); break;
    case kernels::RopePositions::positions_i64:
      result.push_back({"positions", {t}, {1}, DType::int64});
      result.push_back({"cos_sin_cache", {p_.seq_len, p_.rotary_dim}, {p_.rotary_dim, 1}, DType::float32});
      break;
  }
  heads("q_rope", p_.q_heads);
  heads("k_rope", p_.k_heads);
  return result;
}

void RopeCase::describe(const Log& log) const {
  for (const auto& flag : p_.ignored_flags) log.warning("--" + flag + " does not apply to this routine and is ignored");
  if (p_.variant == RopeVariant::cos_sin_cache) {
    log.info("kbench builds cos_sin_cache as the float32 cos/sin table the API requires (the reference builds random "
             + std::string(dtype_name(p_.dtype)) + " values, which the API refuses: the reference's run fails)");
  }
}

void RopeCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  const std::vector<int64_t> positions = p_.positions();
  std::vector<int32_t> indptr(static_cast<std::size_t>(p_.batch_size + 1));
  for (std::size_t i = 0; i < indptr.size(); ++i) indptr[i] = static_cast<int32_t>(static_cast<int64_t>(i) * p_.seq_len);
  const std::vector<int32_t> offsets(static_cast<std::size_t>(p_.batch_size), 0);
  const std::vector<int32_t> pos_ids(positions.begin(), positions.end());
  const kernels::RopePositions source = p_.position_source();
  const std::vector<float> cache = source == kernels::RopePositions::positions_i64
                                       ? rope_reference::cos_sin_cache(p_.frequencies, p_.seq_len, p_.rotary_dim)
                                       : std::vector<float>{};
  copies_.clear();
  for (int i = 0; i < copies; ++i) {
    Copy c;
    c.q = DeviceBuffer(q_elements() * dtype_size(p_.dtype));
    c.k = DeviceBuffer(k_elements() * dtype_size(p_.dtype));
    c.q_out = DeviceBuffer(c.q.bytes());
    c.k_out = DeviceBuffer(c.k.bytes());
    KBENCH_CUDA_CHECK(kernels::fill_normal(c.q.get(), p_.dtype, static_cast<int64_t>(q_elements()), tensor_seed(seed, i, kQ),
                                           0.0f, 1.0f, stream));
    KBENCH_CUDA_CHECK(kernels::fill_normal(c.k.get(), p_.dtype, static_cast<int64_t>(k_elements()), tensor_seed(seed, i, kK),
                                           0.0f, 1.0f, stream));
    for (DeviceBuffer* out : {&c.q_out, &c.k_out}) {
      KBENCH_CUDA_CHECK(kernels::poison(out->get(), static_cast<int64_t>(out->bytes()), stream));
    }
    switch (source) {
      case kernels::RopePositions::request_offsets:
        c.indptr = upload(indptr, stream);
        c.offsets = upload(offsets, stream);
        break;
      case kernels::RopePositions::pos_ids: c.pos_ids = upload(pos_ids, stream); break;
      case kernels::RopePositions::positions_i64:
        c.positions = upload(positions, stream);
        c.cache = upload(cache, stream);
        break;
    }
    copies_.push_back(std::move(c));
  }
  // The host tables uploaded above must outlive the copies.
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

kernels::RopeParams RopeCase::params(int copy_index) const {
  const Copy& c = copies_.at(static_cast<std::size_t>(copy_index));
  kernels::RopeParams k = p_.shape();
  k.q = c.q.get();
  k.k = c.k.get();
  k.q_out = c.q_out.get();
  k.k_out = c.k_out.get();
  k.indptr = c.indptr.as<int32_t>();
  k.offsets = c.offsets.as<int32_t>();
  k.pos_ids = c.pos_ids.as<int32_t>();
  k.positions = c.positions.as<int64_t>();
  k.cos_sin_cache = c.cache.as<float>();
  return k;
}

std::vector<CheckedOutput> RopeCase::outputs() const {
  const kernels::RopeParams k = params(0);
  const Tolerance tolerance = tolerance_of(p_.dtype);
  return {{"q_rope", k.q_out, p_.dtype, q_elements(), tolerance}, {"k_rope", k.k_out, p_.dtype, k_elements(), tolerance}};
}

std::vector<std::vector<float>> RopeCase::reference(cudaStream_t stream) {
  const kernels::RopeParams k = params(0);
  const std::vector<int64_t> positions = p_.positions();
  const std::vector<float> cache = p_.variant == RopeVariant::cos_sin_cache
                                       ? read_as_floats(k.cos_sin_cache, DType::float32,
                                                        static_cast<std::size_t>(p_.seq_len * p_.rotary_dim), stream)
                                       : std::vector<float>{};
  const rope_reference::RotationOf rotation = p_.variant == RopeVariant::cos_sin_cache
                                                  ? rope_reference::cached_rotation(cache, p_.rotary_dim)
                                                  : rope_reference::computed_rotation(p_.frequencies, p_.rotary_dim);
  std::vector<std::vector<float>> result;
  for (const auto& [input, heads, count] : {std::tuple{k.q, p_.q_heads, q_elements()}, std::tuple{k.k, p_.k_heads, k_elements()}}) {
    const rope_reference::Heads shape{p_.tokens(), heads, p_.head_dim, p_.rotary_dim, p_.interleave};
    result.push_back(rope_reference::rotate(read_as_floats(input, p_.dtype, count, stream), shape, positions, rotation));
  }
  return result;
}

}  // namespace kbench
