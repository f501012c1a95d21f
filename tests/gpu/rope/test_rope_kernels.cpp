// GPU tests of kbench's RoPE kernel against the host fp64 reference (routines/rope/rope_reference):
// NeoX and interleaved pairs, rotary dims below the head dim, Llama 3.1 frequencies, the fp32
// cos/sin cache, every position source (ragged requests with non-zero offsets, pos_ids, int64
// positions), token counts that are not multiples of the block, both dtypes and PDL; outputs
// poisoned with NaN first, so an element the kernel leaves unwritten fails. Then kbench end to end
// with --refcheck. Each test skips itself where no CUDA device is present.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/rope/rope.hpp"
#include "routines/device_tensors.hpp"
#include "routines/rope/rope_reference.hpp"
#include "run_command.hpp"

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
  // head_dim 72 with rotary_dim 48 (a NeoX half of 24: three vectors), head_dim 16, 256, one head.
  const Shape shapes[] = {
      {131, 32, 8, 72, 48, false, false, DType::bfloat16, kk::RopePositions::request_offsets, false},
      {131, 32, 8, 72, 48, true, true, DType::float16, kk::RopePositions::pos_ids, true},
      {257, 1, 1, 16, 16, false, false, DType::float16, kk::RopePositions::pos_ids, false},
      {33, 3, 5, 256, 192, true, true, DType::bfloat16, kk::RopePositions::request_offsets, true},
      {129, 8, 1, 128, 32, false, false, DType::float16, kk::RopePositions::positions_i64, true},
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
  const std::string list = ::testing::TempDir() + "kbench_rope_e2e.txt";
  {
    std::ofstream out(list);
    out << "--routine apply_rope --batch_size 3 --seq_len 333 --num_qo_heads 32 --num_kv_heads 8 --head_dim 128 --refcheck\n"
           "--routine apply_rope_pos_ids --batch_size 2 --seq_len 1000 --num_qo_heads 32 --num_kv_heads 8 --head_dim 128 "
           "--input_dtype bfloat16 --interleave --rotary_dim 64 --refcheck\n"
           "--routine apply_llama31_rope --batch_size 4 --seq_len 129 --num_qo_heads 32 --num_kv_heads 8 --head_dim 128 "
           "--rope_theta 500000.0 --rope_scale 8 --input_dtype bfloat16 --refcheck\n"
           "--routine apply_llama31_rope_pos_ids --batch_size 4 --seq_len 100 --num_qo_heads 8 --num_kv_heads 8 --head_dim 64 "
           "--interleave --refcheck\n"
           "--routine apply_rope_with_cos_sin_cache --batch_size 2 --seq_len 2048 --num_qo_heads 64 --num_kv_heads 8 "
           "--head_dim 128 --input_dtype bfloat16 --interleave --refcheck\n";
  }
  const auto r = kbench::testing::run_kbench("--testlist " + list + " -n 3");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("[INFO] Backends: 5 passed, 0 ran without refcheck, 0 incorrect, 0 not supported, 0 failed"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("[ERROR]"), std::string::npos) << r.output;
}

}  // namespace
