// GPU tests of kbench's RoPE kernels against the host fp64 reference (routines/rope/rope_reference):
// NeoX and interleaved pairs, rotary dims below the head dim, Llama 3.1 frequencies, the fp32
// cos/sin cache, every position source (ragged requests with non-zero offsets, pos_ids, int64
// positions), token counts that are not multiples of the block, both dtypes and PDL; outputs
// poisoned with NaN first, so an element the kernel leaves unwritten fails. The FP8 kernel
// (rope_quantize_fp8, its MLA form, the paged append): rotated outputs within one fp8 grid step of
// the fp64 rotation, copied (nope, V) outputs bit-exact against the host's rounding of the same
// fp32 product, the paged caches' written slots checked and every other byte still the poison
// (shuffled pages, requests starting mid-page, padding tokens, spare pages, page sizes 1 / 16 / 64,
// NHD and HND). Then kbench end to end with --refcheck. Each test skips itself where no CUDA device
// is present.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/host_tensor.hpp"
#include "core/refcheck.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/rope/rope.hpp"
#include "routines/device_tensors.hpp"
#include "routines/rope/rope_reference.hpp"

namespace {

using kbench::DeviceBuffer;
using kbench::DType;
namespace kk = kbench::kernels;
namespace ref = kbench::rope_reference;
using kbench::testing::to_host;

struct Shape {
  int64_t tokens = 1;
  int q_heads = 32;
  int k_heads = 8;
  int head_dim = 128;
  int rotary_dim = 128;
  bool interleave = false;
  bool llama31 = false;
  DType dtype = DType::float16;
  kk::RopePositions source = kk::RopePositions::pos_ids;
  bool pdl = false;

  [[nodiscard]] std::string describe() const {
    std::ostringstream s;
    s << tokens << " tokens, heads " << q_heads << "/" << k_heads << ", head_dim " << head_dim << ", rotary_dim "
      << rotary_dim << (interleave ? " interleaved" : " neox") << (llama31 ? " llama31" : "") << " "
      << kbench::dtype_name(dtype) << " positions " << static_cast<int>(source) << (pdl ? " pdl" : "");
    return s.str();
  }
};

// Normal values rounded to the dtype: the floats the reference sees, and their raw bits.
struct HostTensor {
  std::vector<float> values;
  std::vector<uint16_t> raw;
};

HostTensor random_tensor(std::size_t count, DType dtype, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  HostTensor t;
  t.values.resize(count);
  t.raw.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const float v = normal(rng);
    if (dtype == DType::bfloat16) {
      const __nv_bfloat16 b = __float2bfloat16(v);
      t.values[i] = __bfloat162float(b);
      std::memcpy(&t.raw[i], &b, sizeof(uint16_t));
    } else {
      const __half h = __float2half(v);
      t.values[i] = __half2float(h);
      std::memcpy(&t.raw[i], &h, sizeof(uint16_t));
    }
  }
  return t;
}

float as_float(uint16_t raw, DType dtype) {
  if (dtype == DType::bfloat16) {
    __nv_bfloat16 b;
    std::memcpy(static_cast<void*>(&b), &raw, sizeof(b));
    return __bfloat162float(b);
  }
  __half h;
  std::memcpy(static_cast<void*>(&h), &raw, sizeof(h));
  return __half2float(h);
}

// The same tolerance as the refcheck's (rope_case.cpp).
double tolerance(DType dtype) { return dtype == DType::bfloat16 ? 1.6e-2 : 4e-3; }

void expect_kernel_matches_reference(const Shape& s, uint32_t seed) {
  SCOPED_TRACE(s.describe());
  std::mt19937 rng(seed);
  kbench::CudaStream stream;
  const ref::Frequencies frequencies = s.llama31 ? ref::Frequencies{5e5, 8.0, true, 1.0, 4.0, 8192.0} : ref::Frequencies{1e4, 1.0};
  const HostTensor q = random_tensor(static_cast<std::size_t>(s.tokens * s.q_heads * s.head_dim), s.dtype, rng);
  const HostTensor k = random_tensor(static_cast<std::size_t>(s.tokens * s.k_heads * s.head_dim), s.dtype, rng);

  // Positions: ragged requests (1 to 300 tokens) at random offsets, or random per-token ids.
  std::vector<int64_t> positions(static_cast<std::size_t>(s.tokens));
  std::vector<int32_t> indptr = {0};
  std::vector<int32_t> offsets;
  constexpr int64_t kCacheRows = 5000;
  if (s.source == kk::RopePositions::request_offsets) {
    std::uniform_int_distribution<int> length(1, 300);
    std::uniform_int_distribution<int> offset(0, 4000);
    while (indptr.back() < s.tokens) {
      offsets.push_back(offset(rng));
      indptr.push_back(static_cast<int32_t>(std::min<int64_t>(indptr.back() + length(rng), s.tokens)));
      for (int32_t t = indptr[indptr.size() - 2]; t < indptr.back(); ++t) {
        positions[static_cast<std::size_t>(t)] = offsets.back() + (t - indptr[indptr.size() - 2]);
      }
    }
  } else {
    std::uniform_int_distribution<int64_t> position(0, kCacheRows - 1);
    for (auto& p : positions) p = position(rng);
  }
  const std::vector<int32_t> pos_ids(positions.begin(), positions.end());
  const std::vector<float> cache = s.source == kk::RopePositions::positions_i64
                                       ? ref::cos_sin_cache(frequencies, kCacheRows, s.rotary_dim)
                                       : std::vector<float>{};

  const DeviceBuffer q_in = kbench::upload(q.raw, stream.get());
  const DeviceBuffer k_in = kbench::upload(k.raw, stream.get());
  const DeviceBuffer q_out(q.raw.size() * sizeof(uint16_t));
  const DeviceBuffer k_out(k.raw.size() * sizeof(uint16_t));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(q_out.get(), 0xFF, q_out.bytes(), stream.get()));  // NaN in both dtypes
  KBENCH_CUDA_CHECK(cudaMemsetAsync(k_out.get(), 0xFF, k_out.bytes(), stream.get()));
  const DeviceBuffer indptr_d = kbench::upload(indptr, stream.get());
  const DeviceBuffer offsets_d = kbench::upload(offsets, stream.get());
  const DeviceBuffer pos_ids_d = kbench::upload(pos_ids, stream.get());
  const DeviceBuffer positions_d = kbench::upload(positions, stream.get());
  const DeviceBuffer cache_d = kbench::upload(cache, stream.get());

  kk::RopeParams p;
  p.q = q_in.get();
  p.k = k_in.get();
  p.q_out = q_out.get();
  p.k_out = k_out.get();
  p.position_source = s.source;
  p.indptr = indptr_d.as<int32_t>();
  p.offsets = offsets_d.as<int32_t>();
  p.requests = static_cast<int64_t>(offsets.size());
  p.pos_ids = pos_ids_d.as<int32_t>();
  p.positions = positions_d.as<int64_t>();
  p.cos_sin_cache = s.source == kk::RopePositions::positions_i64 ? cache_d.as<float>() : nullptr;
  p.cache_rows = s.source == kk::RopePositions::positions_i64 ? kCacheRows : 0;
  p.tokens = s.tokens;
  p.q_heads = s.q_heads;
  p.k_heads = s.k_heads;
  p.head_dim = s.head_dim;
  p.rotary_dim = s.rotary_dim;
  p.interleave = s.interleave;
  p.rope_theta = static_cast<float>(frequencies.theta);
  p.rope_scale = static_cast<float>(frequencies.scale);
  const ref::SmoothCoefficients smooth = ref::smooth_coefficients(frequencies);
  p.smooth_a = static_cast<float>(smooth.a);
  p.smooth_b = static_cast<float>(smooth.b);
  p.dtype = s.dtype;
  p.enable_pdl = s.pdl;
  ASSERT_EQ(kk::launch_rope(p, stream.get()), cudaSuccess);
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  const ref::RotationOf rotation = s.source == kk::RopePositions::positions_i64
                                       ? ref::cached_rotation(cache, s.rotary_dim)
                                       : ref::computed_rotation(frequencies, s.rotary_dim);
  const double tol = tolerance(s.dtype);
  for (const auto& [name, input, output, heads] :
       {std::tuple{"q", &q, &q_out, s.q_heads}, std::tuple{"k", &k, &k_out, s.k_heads}}) {
    const std::vector<float> expected =
        ref::rotate(input->values, {s.tokens, heads, s.head_dim, s.rotary_dim, s.interleave}, positions, rotation);
    const std::vector<uint16_t> got = to_host<uint16_t>(output->get(), static_cast<int64_t>(expected.size()), stream.get());
    int64_t mismatches = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const float value = as_float(got[i], s.dtype);
      // Dims past rotary_dim are copies: exact.
      const bool copied = static_cast<int>(i % static_cast<std::size_t>(s.head_dim)) >= s.rotary_dim;
      const bool close = copied ? value == input->values[i]
                                : std::fabs(value - expected[i]) <= tol + tol * std::fabs(expected[i]);
      if (!close && mismatches++ < 5) {
        ADD_FAILURE() << name << "[" << i << "] = " << value << ", expected " << expected[i];
      }
    }
    EXPECT_EQ(mismatches, 0) << name;
  }
}

TEST(RopeKernels, MatchTheHostReference) {
  KBENCH_REQUIRE_GPU();
  uint32_t seed = 1;
  for (const DType dtype : {DType::float16, DType::bfloat16}) {
    for (const kk::RopePositions source :
         {kk::RopePositions::request_offsets, kk::RopePositions::pos_ids, kk::RopePositions::positions_i64}) {
      for (const bool interleave : {false, true}) {
        for (const int64_t tokens : {int64_t{1}, int64_t{127}, int64_t{1000}}) {
          Shape s;
          s.tokens = tokens;
          s.dtype = dtype;
          s.source = source;
          s.interleave = interleave;
          expect_kernel_matches_reference(s, seed++);
          s.rotary_dim = 64;  // half the head rotates, the rest is copied
          s.llama31 = source != kk::RopePositions::positions_i64;
          expect_kernel_matches_reference(s, seed++);
        }
      }
    }
  }
}

TEST(RopeKernels, OddShapes) {
  KBENCH_REQUIRE_GPU();
  uint32_t seed = 100;
  // head_dim 72 with rotary_dim 48 (a NeoX half of 24: three vectors), head_dim 16, 256, one head;
  // more requests than the kernel stages.
  const Shape shapes[] = {
      {131, 32, 8, 72, 48, false, false, DType::bfloat16, kk::RopePositions::request_offsets, false},
      {131, 32, 8, 72, 48, true, true, DType::float16, kk::RopePositions::pos_ids, true},
      {257, 1, 1, 16, 16, false, false, DType::float16, kk::RopePositions::pos_ids, false},
      {33, 3, 5, 256, 192, true, true, DType::bfloat16, kk::RopePositions::request_offsets, true},
      {129, 8, 1, 128, 32, false, false, DType::float16, kk::RopePositions::positions_i64, true},
      // ~1300 ragged requests: more than the kernel stages in shared memory (it searches the global
      // indptr instead).
      {200000, 1, 1, 16, 16, false, true, DType::bfloat16, kk::RopePositions::request_offsets, false},
  };
  for (const Shape& s : shapes) expect_kernel_matches_reference(s, seed++);
}

TEST(RopeKernels, RejectsWhatTheyDoNotTake) {
  KBENCH_REQUIRE_GPU();
  DeviceBuffer buffer(1 << 16);
  kk::RopeParams p;
  p.q = p.k = buffer.get();
  p.q_out = p.k_out = buffer.get();
  p.pos_ids = buffer.as<int32_t>();
  p.tokens = 4;
  p.q_heads = p.k_heads = 1;
  p.head_dim = 64;
  p.rotary_dim = 24;  // not whole 16-byte NeoX halves
  EXPECT_EQ(kk::launch_rope(p, nullptr), cudaErrorInvalidValue);
  p.rotary_dim = 128;  // beyond the head
  EXPECT_EQ(kk::launch_rope(p, nullptr), cudaErrorInvalidValue);
  p.rotary_dim = 64;
  p.position_source = kk::RopePositions::request_offsets;  // no indptr
  EXPECT_EQ(kk::launch_rope(p, nullptr), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(RopeEndToEnd, EveryRoutinePassesTheRefcheck) {
  KBENCH_REQUIRE_GPU();
  const std::string list = kbench::testing::write_testlist(
      "kbench_rope_e2e.txt",
      "--routine apply_rope --batch_size 3 --seq_len 333 --num_qo_heads 32 --num_kv_heads 8 --head_dim 128 --refcheck\n"
      "--routine apply_rope_pos_ids --batch_size 2 --seq_len 1000 --num_qo_heads 32 --num_kv_heads 8 --head_dim 128 "
      "--input_dtype bfloat16 --interleave --rotary_dim 64 --refcheck\n"
      "--routine apply_llama31_rope --batch_size 4 --seq_len 129 --num_qo_heads 32 --num_kv_heads 8 --head_dim 128 "
      "--rope_theta 500000.0 --rope_scale 8 --input_dtype bfloat16 --refcheck\n"
      "--routine apply_llama31_rope_pos_ids --batch_size 4 --seq_len 100 --num_qo_heads 8 --num_kv_heads 8 --head_dim 64 "
      "--interleave --refcheck\n"
      "--routine apply_rope_with_cos_sin_cache --batch_size 2 --seq_len 2048 --num_qo_heads 64 --num_kv_heads 8 "
      "--head_dim 128 --input_dtype bfloat16 --interleave --refcheck\n");
  kbench::testing::expect_testlist_passes(list, "-n 3", 5);
}

// ---- The FP8 kernel ----

struct QuantShape {
  int64_t tokens = 1;
  int q_heads = 32;
  int k_heads = 8;
  int rope_dim = 128;
  int no_rope_dim = 0;
  bool interleave = false;
  DType dtype = DType::bfloat16;
  DType quant_dtype = DType::fp8_e4m3;
  float scale_q = 1.0f;
  float scale_kv = 1.0f;
  bool paged = false;
  int page_size = 16;
  bool hnd = false;
  bool pdl = false;

  [[nodiscard]] std::string describe() const {
    std::ostringstream s;
    s << tokens << " tokens, heads " << q_heads << "/" << k_heads << ", rope " << rope_dim << " nope " << no_rope_dim
      << (interleave ? " interleaved " : " neox ") << kbench::dtype_name(dtype) << " -> " << kbench::dtype_name(quant_dtype)
      << " scales " << scale_q << "/" << scale_kv;
    if (paged) s << " paged " << page_size << (hnd ? " HND" : " NHD");
    if (pdl) s << " pdl";
    return s.str();
  }
};

uint8_t host_fp8(float x, DType format) {
  return static_cast<uint8_t>(
      __nv_cvt_float_to_fp8(x, __NV_SATFINITE, format == DType::fp8_e5m2 ? __NV_E5M2 : __NV_E4M3));
}

// Checks one fp8 output element: `rotated` ones within one grid step of the fp64 value
// (compare_quantized), copies bit-exact against the host rounding of the same fp32 product
// (`copy_source` times `scale`).
struct Fp8Checker {
  DType format;
  std::string name;
  int64_t mismatches = 0;

  void rotated(std::size_t i, double expected, uint8_t raw, float value) {
    // As compare_quantized: saturated, then one grid step beyond the refcheck's tolerance.
    const double limit = kbench::fp8_max_finite(format);
    const double target = std::clamp(expected, -limit, limit);
    const bool close = std::isfinite(value) &&
                       std::fabs(value - target) <= 1e-5 + 1e-5 * std::fabs(target) + kbench::fp8_grid_step(format, target);
    if (!close && mismatches++ < 5) {
      ADD_FAILURE() << name << "[" << i << "] = " << value << " (0x" << std::hex << int{raw} << std::dec << "), expected "
                    << expected;
    }
  }
  void copied(std::size_t i, float source, float scale, uint8_t raw) {
    const uint8_t expected = host_fp8(source * scale, format);
    if (raw != expected && mismatches++ < 5) {
      ADD_FAILURE() << name << "[" << i << "] = 0x" << std::hex << int{raw} << ", expected 0x" << int{expected} << std::dec
                    << " (" << source << " x " << scale << ")";
    }
  }
  void untouched(std::size_t i, uint8_t raw) {
    if (raw != 0xFF && mismatches++ < 5) ADD_FAILURE() << name << "[" << i << "] written (0x" << std::hex << int{raw} << ")";
  }
};

struct PagedInputs {
  std::vector<int32_t> kv_indices, kv_indptr, batch_indices, positions;
  int64_t pages = 0;
};

// Ragged requests (1 to 200 tokens) whose appended tokens start mid-context (positions offset by
// 0 .. 40), each owning just the pages it needs, shuffled among spare pages nobody owns; every 17th
// token padding (batch index -1).
PagedInputs paged_inputs(int64_t tokens, int page_size, std::mt19937& rng) {
  PagedInputs in;
  std::uniform_int_distribution<int> length(1, 200);
  std::uniform_int_distribution<int> offset(0, 40);
  std::vector<int64_t> pages_of;
  in.kv_indptr = {0};
  int64_t t = 0;
  for (int request = 0; t < tokens; ++request) {
    const int64_t n = std::min<int64_t>(length(rng), tokens - t);
    const int first = offset(rng);
    for (int64_t i = 0; i < n; ++i, ++t) {
      in.batch_indices.push_back(t % 17 == 5 ? -1 : request);
      in.positions.push_back(static_cast<int32_t>(first + i));
    }
    const int64_t pages = (first + n + page_size - 1) / page_size;
    in.kv_indptr.push_back(static_cast<int32_t>(in.kv_indptr.back() + pages));
  }
  in.pages = in.kv_indptr.back() + 3;  // spare pages
  std::vector<int32_t> order(static_cast<std::size_t>(in.pages));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::shuffle(order.begin(), order.end(), rng);
  in.kv_indices.assign(order.begin(), order.begin() + in.kv_indptr.back());
  return in;
}

void expect_quantize_matches_reference(const QuantShape& s, uint32_t seed) {
  SCOPED_TRACE(s.describe());
  std::mt19937 rng(seed);
  kbench::CudaStream stream;
  const cudaStream_t st = stream.get();
  const int head_dim = s.rope_dim + s.no_rope_dim;
  auto count = [&](int heads, int dim) { return static_cast<std::size_t>(s.tokens * heads * dim); };
  const HostTensor q_rope = random_tensor(count(s.q_heads, s.rope_dim), s.dtype, rng);
  const HostTensor k_rope = random_tensor(count(s.k_heads, s.rope_dim), s.dtype, rng);
  const HostTensor q_nope = random_tensor(count(s.q_heads, s.no_rope_dim), s.dtype, rng);
  const HostTensor k_nope = random_tensor(count(s.k_heads, s.no_rope_dim), s.dtype, rng);
  const HostTensor v = random_tensor(s.paged ? count(s.k_heads, head_dim) : 0, s.dtype, rng);
  constexpr int64_t kCacheRows = 3000;
  std::uniform_int_distribution<int32_t> row(0, kCacheRows - 1);
  std::vector<int32_t> pos_ids(static_cast<std::size_t>(s.tokens));
  for (auto& p : pos_ids) p = row(rng);
  const std::vector<int64_t> positions(pos_ids.begin(), pos_ids.end());
  const std::vector<float> cache = ref::cos_sin_cache({1e4, 1.0}, kCacheRows, s.rope_dim);
  const PagedInputs paged = s.paged ? paged_inputs(s.tokens, s.page_size, rng) : PagedInputs{};
  const ref::PagedCache cache_shape{paged.pages, s.page_size, s.k_heads, head_dim, s.hnd};

  auto poisoned = [&](std::size_t bytes) {
    DeviceBuffer b(std::max<std::size_t>(bytes, 1));
    KBENCH_CUDA_CHECK(cudaMemsetAsync(b.get(), 0xFF, b.bytes(), st));  // NaN in both fp8 formats
    return b;
  };
  const DeviceBuffer q_rope_d = kbench::upload(q_rope.raw, st), k_rope_d = kbench::upload(k_rope.raw, st);
  const DeviceBuffer q_nope_d = kbench::upload(q_nope.raw, st), k_nope_d = kbench::upload(k_nope.raw, st);
  const DeviceBuffer v_d = kbench::upload(v.raw, st);
  const DeviceBuffer cache_d = kbench::upload(cache, st), pos_ids_d = kbench::upload(pos_ids, st);
  const DeviceBuffer kv_indices_d = kbench::upload(paged.kv_indices, st), kv_indptr_d = kbench::upload(paged.kv_indptr, st);
  const DeviceBuffer batch_d = kbench::upload(paged.batch_indices, st), positions_d = kbench::upload(paged.positions, st);
  const DeviceBuffer q_rope_out = poisoned(q_rope.raw.size()), q_nope_out = poisoned(q_nope.raw.size());
  const DeviceBuffer k_rope_out = poisoned(k_rope.raw.size()), k_nope_out = poisoned(k_nope.raw.size());
  const auto cache_elements = static_cast<std::size_t>(cache_shape.elements());
  const DeviceBuffer k_cache = poisoned(cache_elements), v_cache = poisoned(cache_elements);

  kk::RopeQuantizeParams p;
  p.q_rope = q_rope_d.get();
  p.k_rope = k_rope_d.get();
  p.q_nope = q_nope_d.get();
  p.k_nope = k_nope_d.get();
  p.q_rope_out = q_rope_out.get();
  p.q_nope_out = q_nope_out.get();
  p.cos_sin_cache = cache_d.as<float>();
  p.cache_rows = kCacheRows;
  p.pos_ids = pos_ids_d.as<int32_t>();
  p.tokens = s.tokens;
  p.q_heads = s.q_heads;
  p.k_heads = s.k_heads;
  p.rope_dim = s.rope_dim;
  p.no_rope_dim = s.no_rope_dim;
  p.interleave = s.interleave;
  p.quant_scale_q = s.scale_q;
  p.quant_scale_kv = s.scale_kv;
  p.dtype = s.dtype;
  p.quant_dtype = s.quant_dtype;
  p.enable_pdl = s.pdl;
  if (s.paged) {
    p.v = v_d.get();
    p.k_cache = k_cache.get();
    p.v_cache = v_cache.get();
    p.kv_indices = kv_indices_d.as<int32_t>();
    p.kv_indptr = kv_indptr_d.as<int32_t>();
    p.batch_indices = batch_d.as<int32_t>();
    p.positions = positions_d.as<int32_t>();
    p.pages = paged.pages;
    p.page_size = s.page_size;
    p.hnd = s.hnd;
  } else {
    p.k_rope_out = k_rope_out.get();
    p.k_nope_out = k_nope_out.get();
  }
  ASSERT_EQ(kk::launch_rope_quantize(p, st), cudaSuccess);
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(st));

  const ref::RotationOf rotation = ref::cached_rotation(cache, s.rope_dim);
  auto rotated = [&](const HostTensor& in, int heads) {
    return ref::rotate(in.values, {s.tokens, heads, s.rope_dim, s.rope_dim, s.interleave}, positions, rotation);
  };
  // Padding tokens (paged, batch index -1) are skipped entirely: their q outputs keep the poison.
  auto padding = [&](std::size_t token) { return s.paged && paged.batch_indices[token] < 0; };
  auto check_rotated = [&](const char* name, const HostTensor& in, int heads, float scale, const DeviceBuffer& out) {
    Fp8Checker check{s.quant_dtype, name};
    const std::vector<float> expected = rotated(in, heads);
    const std::vector<uint8_t> raw = to_host<uint8_t>(out.get(), static_cast<int64_t>(expected.size()), st);
    const std::vector<float> value = kbench::read_as_floats(out.get(), s.quant_dtype, expected.size(), st);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (padding(i / static_cast<std::size_t>(heads * s.rope_dim))) {
        check.untouched(i, raw[i]);
      } else {
        check.rotated(i, static_cast<double>(expected[i]) * scale, raw[i], value[i]);
      }
    }
    EXPECT_EQ(check.mismatches, 0) << name;
  };
  auto check_copied = [&](const char* name, const HostTensor& in, int heads, float scale, const DeviceBuffer& out) {
    Fp8Checker check{s.quant_dtype, name};
    const std::vector<uint8_t> raw = to_host<uint8_t>(out.get(), static_cast<int64_t>(in.values.size()), st);
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (padding(i / static_cast<std::size_t>(heads * s.no_rope_dim))) {
        check.untouched(i, raw[i]);
      } else {
        check.copied(i, in.values[i], scale, raw[i]);
      }
    }
    EXPECT_EQ(check.mismatches, 0) << name;
  };
  check_rotated("q_rope_out", q_rope, s.q_heads, s.scale_q, q_rope_out);
  if (s.no_rope_dim > 0) check_copied("q_nope_out", q_nope, s.q_heads, s.scale_q, q_nope_out);
  if (!s.paged) {
    check_rotated("k_rope_out", k_rope, s.k_heads, s.scale_kv, k_rope_out);
    if (s.no_rope_dim > 0) check_copied("k_nope_out", k_nope, s.k_heads, s.scale_kv, k_nope_out);
    return;
  }
  // The caches: where each element came from (-1: nobody's), rope elements against the rotation.
  const std::vector<float> k_rotated = rotated(k_rope, s.k_heads);
  std::vector<int64_t> source(cache_elements, -1);  // token * k_heads + head
  for (std::size_t token = 0; token < static_cast<std::size_t>(s.tokens); ++token) {
    const int32_t request = paged.batch_indices[token];
    if (request < 0) continue;
    const ref::PageEntry e =
        ref::append_entry(paged.kv_indices, paged.kv_indptr[static_cast<std::size_t>(request)], s.page_size, paged.positions[token]);
    for (int head = 0; head < s.k_heads; ++head) {
      source[static_cast<std::size_t>(ref::cache_offset(cache_shape, e.page, e.entry, head, 0)) / static_cast<std::size_t>(head_dim)] =
          static_cast<int64_t>(token) * s.k_heads + head;
    }
  }
  const std::vector<uint8_t> k_raw = to_host<uint8_t>(k_cache.get(), static_cast<int64_t>(cache_elements), st);
  const std::vector<uint8_t> v_raw = to_host<uint8_t>(v_cache.get(), static_cast<int64_t>(cache_elements), st);
  const std::vector<float> k_value = kbench::read_as_floats(k_cache.get(), s.quant_dtype, cache_elements, st);
  Fp8Checker k_check{s.quant_dtype, "k_cache"};
  Fp8Checker v_check{s.quant_dtype, "v_cache"};
  for (std::size_t i = 0; i < cache_elements; ++i) {
    const int64_t from = source[i / static_cast<std::size_t>(head_dim)];
    const int d = static_cast<int>(i % static_cast<std::size_t>(head_dim));
    if (from < 0) {
      k_check.untouched(i, k_raw[i]);
      v_check.untouched(i, v_raw[i]);
      continue;
    }
    const auto row = static_cast<std::size_t>(from);
    if (d < s.rope_dim) {
      k_check.rotated(i, static_cast<double>(k_rotated[row * static_cast<std::size_t>(s.rope_dim) + static_cast<std::size_t>(d)]) * s.scale_kv,
                      k_raw[i], k_value[i]);
    } else {
      k_check.copied(i, k_nope.values[row * static_cast<std::size_t>(s.no_rope_dim) + static_cast<std::size_t>(d - s.rope_dim)],
                     s.scale_kv, k_raw[i]);
    }
    v_check.copied(i, v.values[row * static_cast<std::size_t>(head_dim) + static_cast<std::size_t>(d)], s.scale_kv, v_raw[i]);
  }
  EXPECT_EQ(k_check.mismatches, 0) << "k_cache";
  EXPECT_EQ(v_check.mismatches, 0) << "v_cache";
}

TEST(RopeQuantizeKernels, MatchTheHostReference) {
  KBENCH_REQUIRE_GPU();
  uint32_t seed = 500;
  for (const DType dtype : {DType::bfloat16, DType::float16}) {
    for (const DType quant : {DType::fp8_e4m3, DType::fp8_e5m2}) {
      for (const bool interleave : {false, true}) {
        for (const int64_t tokens : {int64_t{1}, int64_t{127}, int64_t{1000}}) {
          QuantShape s;
          s.tokens = tokens;
          s.dtype = dtype;
          s.quant_dtype = quant;
          s.interleave = interleave;
          expect_quantize_matches_reference(s, seed++);
          s.rope_dim = 64;  // with an unrotated part, other scales, PDL
          s.no_rope_dim = 64;
          s.scale_q = 0.5f;
          s.scale_kv = 3.0f;
          s.pdl = true;
          expect_quantize_matches_reference(s, seed++);
        }
      }
    }
  }
}

TEST(RopeQuantizeKernels, MlaAndOddShapes) {
  KBENCH_REQUIRE_GPU();
  uint32_t seed = 700;
  const QuantShape mla{131, 16, 1, 64, 512, false, DType::bfloat16};           // DeepSeek: rope 64, latent 512
  const QuantShape mla_sample{333, 13, 1, 128, 64, false, DType::bfloat16};    // sample line 284's dims, odd heads
  const QuantShape interleaved{257, 3, 5, 48, 16, true, DType::float16, DType::fp8_e5m2};  // rope 48: three units
  const QuantShape large_scale{77, 7, 3, 32, 0, false, DType::bfloat16, DType::fp8_e4m3, 300.0f, 200.0f};  // saturates
  for (const QuantShape& s : {mla, mla_sample, interleaved, large_scale}) expect_quantize_matches_reference(s, seed++);
}

TEST(RopeQuantizeKernels, PagedAppendWritesOnlyItsSlots) {
  KBENCH_REQUIRE_GPU();
  uint32_t seed = 900;
  for (const int page_size : {1, 16, 64}) {
    for (const bool hnd : {false, true}) {
      for (const bool interleave : {false, true}) {
        QuantShape s;
        s.tokens = 333;
        s.q_heads = 5;
        s.k_heads = 3;
        s.paged = true;
        s.page_size = page_size;
        s.hnd = hnd;
        s.interleave = interleave;
        expect_quantize_matches_reference(s, seed++);
        s.rope_dim = 64;  // partial rotary dim: nd = 64 of head_dim 128
        s.no_rope_dim = 64;
        s.quant_dtype = DType::fp8_e5m2;
        s.dtype = DType::float16;
        s.scale_q = 2.0f;
        s.scale_kv = 0.25f;
        s.pdl = true;
        expect_quantize_matches_reference(s, seed++);
      }
    }
  }
}

TEST(RopeQuantizeKernels, RejectWhatTheyDoNotTake) {
  KBENCH_REQUIRE_GPU();
  DeviceBuffer buffer(1 << 16);
  kk::RopeQuantizeParams p;
  p.q_rope = p.k_rope = p.q_nope = p.k_nope = buffer.get();
  p.q_rope_out = p.k_rope_out = p.q_nope_out = p.k_nope_out = buffer.get();
  p.cos_sin_cache = buffer.as<float>();
  p.cache_rows = 4;
  p.pos_ids = buffer.as<int32_t>();
  p.tokens = 4;
  p.q_heads = p.k_heads = 1;
  p.rope_dim = 48;  // NeoX halves of 24: not whole 16-element units
  EXPECT_EQ(kk::launch_rope_quantize(p, nullptr), cudaErrorInvalidValue);
  p.rope_dim = 64;
  p.no_rope_dim = 8;
  EXPECT_EQ(kk::launch_rope_quantize(p, nullptr), cudaErrorInvalidValue);
  p.no_rope_dim = 0;
  p.quant_dtype = DType::bfloat16;
  EXPECT_EQ(kk::launch_rope_quantize(p, nullptr), cudaErrorInvalidValue);
  p.quant_dtype = DType::fp8_e4m3;
  p.k_cache = buffer.get();  // paged without its tables
  EXPECT_EQ(kk::launch_rope_quantize(p, nullptr), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(RopeEndToEnd, Fp8RoutinesPassTheRefcheck) {
  KBENCH_REQUIRE_GPU();
  kbench::testing::expect_testlist_passes(std::string(KBENCH_SOURCE_DIR) + "/tests/gpu/rope/rope_fp8_cases.txt",
                                          "--backends cuda -n 3", 7);
}

}  // namespace
