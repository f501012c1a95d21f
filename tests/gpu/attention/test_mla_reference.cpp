// GPU tests of MLA decode's fp32 reference kernel (kernels/attention/mla) against a host
// double-precision computation: odd and ragged lengths (1, 7, 130 keys), page sizes 1, 16 and 64,
// 3 to 128 heads, 1, 2 and 4 query tokens per request (causal among them), head dims 512/64 and
// 256/32, fp8_e4m3 caches and queries with per-tensor scales. Inputs are random (q_pe too: a rope
// bug must show); the output is poisoned (NaN) first, so every element must be written.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kbench/dtype.hpp"
#include "kernels/attention/mla/mla.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/attention/paged_kv_layout.hpp"

namespace kbench {
namespace {

struct MlaShape {
  std::vector<int32_t> lens;  // keys per request (>= s_qo)
  int s_qo = 1;
  int num_heads = 16;
  int d_ckv = 512;
  int d_kpe = 64;
  int page_size = 64;
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
};

std::string describe(const MlaShape& s) {
  return "batch " + std::to_string(s.lens.size()) + " lens " + lengths_text(s.lens) + " s_qo " +
         std::to_string(s.s_qo) + " heads " + std::to_string(s.num_heads) + " dims " + std::to_string(s.d_ckv) +
         "/" + std::to_string(s.d_kpe) + " page " + std::to_string(s.page_size) + " q " +
         std::string(dtype_name(s.q_dtype)) + " kv " + std::string(dtype_name(s.kv_dtype));
}

// A random device tensor and its values as host floats.
struct Tensor {
  DeviceBuffer data;
  std::vector<float> host;
};

Tensor random_tensor(DType dtype, std::size_t count, uint64_t seed, float stddev, cudaStream_t stream) {
  Tensor t{DeviceBuffer(count * dtype_size(dtype)), {}};
  KBENCH_CUDA_CHECK(kernels::fill_normal(t.data.get(), dtype, static_cast<int64_t>(count), seed, 0.0f, stddev, stream));
  DeviceBuffer floats(count * sizeof(float));
  KBENCH_CUDA_CHECK(kernels::convert_to_float(t.data.get(), dtype, static_cast<int64_t>(count), floats.as<float>(), stream));
  t.host = testing::to_host<float>(floats.get(), static_cast<int64_t>(count), stream);
  return t;
}

void expect_reference_matches_host(const MlaShape& s) {
  SCOPED_TRACE(describe(s));
  CudaStream stream;
  const int batch = static_cast<int>(s.lens.size());
  const int max_len = *std::max_element(s.lens.begin(), s.lens.end());
  const PagedKvLayout pages = make_paged_kv_layout(s.lens, max_len, s.page_size, 11);
  const std::size_t rows = static_cast<std::size_t>(batch) * s.s_qo;
  const std::size_t tokens = static_cast<std::size_t>(pages.total_pages) * s.page_size;
  const float q_std = is_fp8(s.q_dtype) ? 10.0f : 1.0f;
  const float kv_std = is_fp8(s.kv_dtype) ? 10.0f : 1.0f;
  const Tensor q_nope = random_tensor(s.q_dtype, rows * s.num_heads * s.d_ckv, 1, q_std, stream.get());
  const Tensor q_pe = random_tensor(s.q_dtype, rows * s.num_heads * s.d_kpe, 2, q_std, stream.get());
  const Tensor ckv = random_tensor(s.kv_dtype, tokens * s.d_ckv, 3, kv_std, stream.get());
  const Tensor kpe = random_tensor(s.kv_dtype, tokens * s.d_kpe, 4, kv_std, stream.get());
  const auto upload = [&](const std::vector<int32_t>& v) {
    DeviceBuffer b(v.size() * sizeof(int32_t));
    KBENCH_CUDA_CHECK(cudaMemcpy(b.get(), v.data(), b.bytes(), cudaMemcpyHostToDevice));
    return b;
  };
  const DeviceBuffer indptr = upload(pages.indptr), indices = upload(pages.indices), lens = upload(s.lens);

  kernels::MlaParams p;
  p.q_nope = q_nope.data.get();
  p.q_pe = q_pe.data.get();
  p.q_dtype = s.q_dtype;
  p.q_scale = 1.0f / q_std;
  p.ckv = ckv.data.get();
  p.kpe = kpe.data.get();
  p.kv_dtype = s.kv_dtype;
  p.ckv_scale = 1.0f / kv_std;
  p.kpe_scale = 1.0f / kv_std;
  p.kv_indptr = indptr.as<int32_t>();
  p.kv_indices = indices.as<int32_t>();
  p.kv_len = lens.as<int32_t>();
  p.batch = batch;
  p.s_qo = s.s_qo;
  p.num_heads = s.num_heads;
  p.head_dim_ckv = s.d_ckv;
  p.head_dim_kpe = s.d_kpe;
  p.page_size = s.page_size;
  p.sm_scale = static_cast<float>(1.0 / std::sqrt(192.0));
  const std::size_t out_count = rows * s.num_heads * s.d_ckv;
  DeviceBuffer out(out_count * sizeof(float));
  KBENCH_CUDA_CHECK(kernels::poison(out.get(), static_cast<int64_t>(out.bytes()), stream.get()));
  ASSERT_EQ(kernels::launch_mla_reference(p, out.as<float>(), stream.get()), cudaSuccess);
  const auto got = testing::to_host<float>(out.get(), static_cast<int64_t>(out_count), stream.get());

  // Host: double precision over the dequantised values.
  const double q_scale = p.q_scale, kv_scale = p.ckv_scale;
  double worst = 0;
  for (int b = 0; b < batch; ++b) {
    const int32_t* page_list = pages.indices.data() + pages.indptr[b];
    for (int i = 0; i < s.s_qo; ++i) {
      const int visible = s.lens[b] - s.s_qo + 1 + i;
      const std::size_t row = static_cast<std::size_t>(b) * s.s_qo + i;
      for (int h = 0; h < s.num_heads; ++h) {
        const std::size_t head_row = row * s.num_heads + h;
        std::vector<double> logits(static_cast<std::size_t>(visible));
        double m = -INFINITY;
        for (int t = 0; t < visible; ++t) {
          const std::size_t key = static_cast<std::size_t>(page_list[t / s.page_size]) * s.page_size + t % s.page_size;
          double dot = 0;
          for (int d = 0; d < s.d_ckv; ++d) {
            dot += static_cast<double>(q_nope.host[head_row * s.d_ckv + d]) * ckv.host[key * s.d_ckv + d];
          }
          for (int d = 0; d < s.d_kpe; ++d) {
            dot += static_cast<double>(q_pe.host[head_row * s.d_kpe + d]) * kpe.host[key * s.d_kpe + d];
          }
          logits[t] = p.sm_scale * q_scale * kv_scale * dot;
          m = std::max(m, logits[t]);
        }
        double sum = 0;
        std::vector<double> acc(static_cast<std::size_t>(s.d_ckv), 0.0);
        for (int t = 0; t < visible; ++t) {
          const double e = std::exp(logits[t] - m);
          sum += e;
          const std::size_t key = static_cast<std::size_t>(page_list[t / s.page_size]) * s.page_size + t % s.page_size;
          for (int d = 0; d < s.d_ckv; ++d) acc[d] += e * kv_scale * ckv.host[key * s.d_ckv + d];
        }
        for (int d = 0; d < s.d_ckv; ++d) {
          const double expected = acc[d] / sum;
          const float value = got[head_row * s.d_ckv + d];
          ASSERT_TRUE(std::isfinite(value)) << "row " << row << " head " << h << " dim " << d;
          worst = std::max(worst, std::abs(value - expected) / (1e-3 + std::abs(expected)));
          ASSERT_NEAR(value, expected, 1e-4 + 1e-4 * std::abs(expected))
              << "row " << row << " head " << h << " dim " << d;
        }
      }
    }
  }
  std::cout << "[mla reference] " << describe(s) << ": worst relative error " << worst << "\n";
}

TEST(MlaReference, OddLengthsPage64) {
  KBENCH_REQUIRE_GPU();
  expect_reference_matches_host({{1, 7, 130}, 1, 16, 512, 64, 64});
}

TEST(MlaReference, PageSizeOneTwoQueryTokens) {
  KBENCH_REQUIRE_GPU();
  expect_reference_matches_host({{2, 5, 33, 64}, 2, 3, 512, 64, 1});
}

TEST(MlaReference, OtherHeadDimsPage16) {
  KBENCH_REQUIRE_GPU();
  expect_reference_matches_host({{3, 100}, 2, 16, 256, 32, 16});
}

TEST(MlaReference, FourQueryTokensManyHeads) {
  KBENCH_REQUIRE_GPU();
  expect_reference_matches_host({{4, 65}, 4, 128, 512, 64, 64});
}

TEST(MlaReference, Fp8CachesAndQueriesWithScales) {
  KBENCH_REQUIRE_GPU();
  expect_reference_matches_host({{9, 70}, 2, 16, 512, 64, 16, DType::bfloat16, DType::fp8_e4m3});
  expect_reference_matches_host({{9, 70}, 1, 16, 512, 64, 16, DType::fp8_e4m3, DType::fp8_e4m3});
}

TEST(MlaReference, RejectsWhatItCannotTake) {
  KBENCH_REQUIRE_GPU();
  kernels::MlaParams p;
  p.batch = 1;
  p.num_heads = 1;
  p.head_dim_ckv = 4096;
  EXPECT_EQ(kernels::launch_mla_reference(p, nullptr, nullptr), cudaErrorInvalidValue);
  p.head_dim_ckv = 512;
  p.q_dtype = DType::float32;
  EXPECT_EQ(kernels::launch_mla_reference(p, nullptr, nullptr), cudaErrorInvalidValue);
  p.q_dtype = DType::bfloat16;
  EXPECT_EQ(kernels::launch_mla_reference(p, nullptr, nullptr), cudaErrorInvalidValue);  // no tensors
  p.batch = 0;
  EXPECT_EQ(kernels::launch_mla_reference(p, nullptr, nullptr), cudaSuccess);  // nothing to do
}

}  // namespace
}  // namespace kbench
