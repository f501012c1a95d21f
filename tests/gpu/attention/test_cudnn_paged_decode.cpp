// GPU tests of the cuDNN paged-decode backend: cuDNN SDPA over a paged KV cache (HND and NHD, MHA
// ratios 8/2 and 64/8, bf16 and fp16, ragged lengths that end mid-page, a scrambled page table with
// spare entries) against a host fp64 reference, and the same run captured in a CUDA graph and
// replayed. Each test skips itself where no CUDA device is present, or where
// cudnn_paged_decode_unsupported says why cuDNN cannot run the case (built only with cuDNN).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cudnn/cudnn_paged_decode.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kbench/dtype.hpp"
#include "kernels/attention/decode/decode.hpp"
#include "kernels/common/tensor_fill.hpp"

namespace {

using kbench::DeviceBuffer;
using kbench::DType;
using kbench::backends::cudnn_paged_decode_unsupported;
using kbench::backends::CudnnPagedDecode;
using kbench::backends::CudnnPagedDecodeShape;
namespace kk = kbench::kernels;

struct Case {
  int num_qo_heads = 8;
  int num_kv_heads = 2;
  int head_dim = 128;
  int page_size = 16;
  std::vector<int> lengths{45, 200, 1};  // 45 and 1 end mid-page, 200 spans several kernel tiles
  DType dtype = DType::bfloat16;
  kk::KvLayout layout = kk::KvLayout::HND;
  bool own_seq_len_q = false;  // pass null for seq_len_q: the backend's own ones
  uint64_t seed = 7;

  [[nodiscard]] std::string describe() const {
    std::ostringstream s;
    s << kbench::dtype_name(dtype) << (layout == kk::KvLayout::HND ? " HND" : " NHD") << " heads " << num_qo_heads
      << "/" << num_kv_heads << " d" << head_dim << " page " << page_size << " lengths";
    for (int len : lengths) s << " " << len;
    return s.str();
  }
};

// The device tensors of one case, their host copies (as float) and the page table.
struct Problem {
  CudnnPagedDecodeShape shape;
  std::vector<int32_t> table;    // [batch][max_pages_per_request]
  std::vector<int32_t> lengths;  // [batch]
  std::vector<float> q;          // [batch][hq][d]
  std::vector<float> cache;      // [num_pages][2][...]
  DeviceBuffer q_dev, cache_dev, table_dev, lengths_dev, ones_dev, out_dev, out_f32_dev;
};

std::vector<float> to_host_float(const void* data, DType dtype, int64_t count, cudaStream_t stream) {
  DeviceBuffer f32(static_cast<std::size_t>(count) * sizeof(float));
  KBENCH_CUDA_CHECK(kk::convert_to_float(data, dtype, count, f32.as<float>(), stream));
  std::vector<float> host(static_cast<std::size_t>(count));
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  KBENCH_CUDA_CHECK(cudaMemcpy(host.data(), f32.get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

CudnnPagedDecodeShape shape_of(const Case& c) {
  CudnnPagedDecodeShape s;
  s.batch = static_cast<int>(c.lengths.size());
  s.num_qo_heads = c.num_qo_heads;
  s.num_kv_heads = c.num_kv_heads;
  s.head_dim = c.head_dim;
  s.page_size = c.page_size;
  int max_pages = 0;
  int total_pages = 0;
  for (int len : c.lengths) {
    const int pages = (len + c.page_size - 1) / c.page_size;
    max_pages = std::max(max_pages, pages);
    total_pages += pages;
  }
  s.max_pages_per_request = max_pages + 1;  // a spare column: table entries past the length
  s.num_pages = total_pages + 3;            // pages no request uses
  s.q_dtype = s.kv_dtype = s.out_dtype = c.dtype;
  s.layout = c.layout;
  s.sm_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  return s;
}

Problem make_problem(const Case& c, cudaStream_t stream) {
  Problem p;
  p.shape = shape_of(c);
  const CudnnPagedDecodeShape& s = p.shape;
  const int64_t elem = static_cast<int64_t>(kbench::dtype_size(c.dtype));
  const int64_t q_count = int64_t{s.batch} * s.num_qo_heads * s.head_dim;
  const int64_t cache_count = int64_t{s.num_pages} * 2 * s.num_kv_heads * s.page_size * s.head_dim;

  // Pages handed out in a scrambled order; unused entries point at page 0 (valid, never read as
  // part of a sequence).
  std::vector<int32_t> order(static_cast<std::size_t>(s.num_pages));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(static_cast<uint32_t>(c.seed));
  std::shuffle(order.begin(), order.end(), rng);
  p.table.assign(static_cast<std::size_t>(s.batch) * s.max_pages_per_request, 0);
  std::size_t next = 0;
  for (int b = 0; b < s.batch; ++b) {
    const int pages = (c.lengths[b] + s.page_size - 1) / s.page_size;
    for (int i = 0; i < pages; ++i) p.table[static_cast<std::size_t>(b) * s.max_pages_per_request + i] = order[next++];
  }
  p.lengths.assign(c.lengths.begin(), c.lengths.end());

  p.q_dev = DeviceBuffer(static_cast<std::size_t>(q_count * elem));
  p.cache_dev = DeviceBuffer(static_cast<std::size_t>(cache_count * elem));
  p.out_dev = DeviceBuffer(static_cast<std::size_t>(q_count * elem));
  p.table_dev = DeviceBuffer(p.table.size() * sizeof(int32_t));
  p.lengths_dev = DeviceBuffer(p.lengths.size() * sizeof(int32_t));
  p.ones_dev = DeviceBuffer(p.lengths.size() * sizeof(int32_t));
  KBENCH_CUDA_CHECK(kk::fill_normal(p.q_dev.get(), c.dtype, q_count, c.seed, 0.0f, 1.0f, stream));
  KBENCH_CUDA_CHECK(kk::fill_normal(p.cache_dev.get(), c.dtype, cache_count, c.seed + 1, 0.0f, 1.0f, stream));
  const std::vector<int32_t> ones(p.lengths.size(), 1);
  KBENCH_CUDA_CHECK(
      cudaMemcpy(p.table_dev.get(), p.table.data(), p.table.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  KBENCH_CUDA_CHECK(
      cudaMemcpy(p.lengths_dev.get(), p.lengths.data(), p.lengths.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  KBENCH_CUDA_CHECK(cudaMemcpy(p.ones_dev.get(), ones.data(), ones.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  p.q = to_host_float(p.q_dev.get(), c.dtype, q_count, stream);
  p.cache = to_host_float(p.cache_dev.get(), c.dtype, cache_count, stream);
  KBENCH_CUDA_CHECK(cudaDeviceSynchronize());  // the default-stream copies above, before `stream` reads them
  return p;
}

// out[b][h][:] in fp64: softmax(sm_scale * q . K^T) V over the request's tokens, read through the
// page table as the layout says.
std::vector<double> reference(const Problem& p) {
  const CudnnPagedDecodeShape& s = p.shape;
  const int64_t H = s.num_kv_heads, P = s.page_size, D = s.head_dim;
  const int group = s.num_qo_heads / s.num_kv_heads;
  auto k_index = [&](int b, int t, int g) {
    const int64_t page = p.table[static_cast<std::size_t>(b) * s.max_pages_per_request + t / P];
    const int64_t slot = t % P;
    const int64_t within = s.layout == kk::KvLayout::HND ? (g * P + slot) * D : (slot * H + g) * D;
    return page * 2 * H * P * D + within;
  };
  std::vector<double> out(static_cast<std::size_t>(s.batch) * s.num_qo_heads * D, 0.0);
  for (int b = 0; b < s.batch; ++b) {
    const int len = p.lengths[b];
    for (int h = 0; h < s.num_qo_heads; ++h) {
      const float* q = &p.q[(static_cast<std::size_t>(b) * s.num_qo_heads + h) * D];
      const int g = h / group;
      std::vector<double> score(static_cast<std::size_t>(len));
      double max_score = -INFINITY;
      for (int t = 0; t < len; ++t) {
        const float* k = &p.cache[k_index(b, t, g)];
        double dot = 0.0;
        for (int64_t i = 0; i < D; ++i) dot += static_cast<double>(q[i]) * k[i];
        score[t] = dot * s.sm_scale;
        max_score = std::max(max_score, score[t]);
      }
      double sum = 0.0;
      for (double& x : score) sum += (x = std::exp(x - max_score));
      double* o = &out[(static_cast<std::size_t>(b) * s.num_qo_heads + h) * D];
      for (int t = 0; t < len; ++t) {
        const float* v = &p.cache[k_index(b, t, g) + H * P * D];
        for (int64_t i = 0; i < D; ++i) o[i] += score[t] / sum * v[i];
      }
    }
  }
  return out;
}

// Counts (and reports the first few) elements outside 1e-2 + 1e-2 * |ref|.
int64_t count_mismatches(const std::vector<float>& got, const std::vector<double>& ref, const std::string& what) {
  int64_t bad = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double tol = 1e-2 + 1e-2 * std::abs(ref[i]);
    if (!(std::abs(static_cast<double>(got[i]) - ref[i]) <= tol)) {  // NaN fails too
      if (bad < 5) ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << ref[i];
      ++bad;
    }
  }
  return bad;
}

class CudnnPagedDecodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KBENCH_REQUIRE_GPU();  // a skip here skips the test body too
    KBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream_ = nullptr;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (DType dtype : {DType::bfloat16, DType::float16}) {
    for (kk::KvLayout layout : {kk::KvLayout::HND, kk::KvLayout::NHD}) {
      for (auto [hq, hk] : {std::pair{8, 2}, std::pair{64, 8}}) {
        Case c;
        c.dtype = dtype;
        c.layout = layout;
        c.num_qo_heads = hq;
        c.num_kv_heads = hk;
        c.own_seq_len_q = hq == 64;
        c.seed = 11 + all.size();
        all.push_back(c);
      }
    }
  }
  Case d64;  // head_dim 64, page 32, a length of exactly one page
  d64.head_dim = 64;
  d64.page_size = 32;
  d64.lengths = {32, 7, 99};
  all.push_back(d64);
  return all;
}

TEST(CudnnPagedDecodeSupport, Fp8KvCacheIsReportedUnsupported) {
  Case c;
  CudnnPagedDecodeShape s = shape_of(c);
  s.kv_dtype = DType::fp8_e4m3;
  const auto why = cudnn_paged_decode_unsupported(s);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("fp8"), std::string::npos) << *why;
  std::cout << "[ cuDNN    ] " << kbench::backends::cudnn_version_string() << "; fp8 KV: " << *why << "\n";
}

TEST_F(CudnnPagedDecodeTest, MatchesHostReference) {
  KBENCH_REQUIRE_GPU();
  int ran = 0;
  std::string not_run;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.describe());
    if (auto why = cudnn_paged_decode_unsupported(shape_of(c))) {
      not_run += "\n  " + c.describe() + ": " + *why;
      continue;
    }
    ++ran;
    Problem p = make_problem(c, stream_);
    CudnnPagedDecode decode(p.shape);
    const int64_t count = int64_t{p.shape.batch} * p.shape.num_qo_heads * p.shape.head_dim;
    KBENCH_CUDA_CHECK(kk::poison(p.out_dev.get(), count * kbench::dtype_size(c.dtype), stream_));
    decode.run(p.q_dev.get(), p.cache_dev.get(), p.table_dev.as<int32_t>(), p.lengths_dev.as<int32_t>(),
               c.own_seq_len_q ? nullptr : p.ones_dev.as<int32_t>(), p.out_dev.get(), stream_);
    KBENCH_CUDA_CHECK(cudaGetLastError());
    const std::vector<float> got = to_host_float(p.out_dev.get(), c.dtype, count, stream_);
    EXPECT_EQ(count_mismatches(got, reference(p), c.describe()), 0);
  }
  if (ran == 0) GTEST_SKIP() << "cuDNN cannot run any case:" << not_run;
  if (!not_run.empty()) std::cout << "[ cuDNN    ] cases cuDNN cannot run here:" << not_run << "\n";
}

TEST_F(CudnnPagedDecodeTest, CudaGraphReplayMatchesEagerRun) {
  KBENCH_REQUIRE_GPU();
  int ran = 0;
  std::string not_run;
  for (kk::KvLayout layout : {kk::KvLayout::HND, kk::KvLayout::NHD}) {
    Case c;
    c.layout = layout;
    c.num_qo_heads = 64;
    c.num_kv_heads = 8;
    SCOPED_TRACE(c.describe());
    if (auto why = cudnn_paged_decode_unsupported(shape_of(c))) {
      not_run += "\n  " + c.describe() + ": " + *why;
      continue;
    }
    ++ran;
    Problem p = make_problem(c, stream_);
    CudnnPagedDecode decode(p.shape);
    const int64_t count = int64_t{p.shape.batch} * p.shape.num_qo_heads * p.shape.head_dim;
    const std::size_t bytes = static_cast<std::size_t>(count) * kbench::dtype_size(c.dtype);
    auto launch = [&] {
      decode.run(p.q_dev.get(), p.cache_dev.get(), p.table_dev.as<int32_t>(), p.lengths_dev.as<int32_t>(),
                 p.ones_dev.as<int32_t>(), p.out_dev.get(), stream_);
    };

    // Eager first: cuDNN loads its kernels on first use, which a capture must not see.
    launch();
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<unsigned char> eager(bytes);
    KBENCH_CUDA_CHECK(cudaMemcpy(eager.data(), p.out_dev.get(), bytes, cudaMemcpyDeviceToHost));

    KBENCH_CUDA_CHECK(kk::poison(p.out_dev.get(), static_cast<int64_t>(bytes), stream_));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    KBENCH_CUDA_CHECK(kbench::testing::capture_and_replay(stream_, 3, [&] {
      launch();
      return cudaSuccess;
    }));
    std::vector<unsigned char> replayed(bytes);
    KBENCH_CUDA_CHECK(cudaMemcpy(replayed.data(), p.out_dev.get(), bytes, cudaMemcpyDeviceToHost));

    // cuDNN's SDPA forward is deterministic: the replay writes the eager run's bytes.
    EXPECT_EQ(std::memcmp(eager.data(), replayed.data(), bytes), 0);
    const std::vector<float> got = to_host_float(p.out_dev.get(), c.dtype, count, stream_);
    EXPECT_EQ(count_mismatches(got, reference(p), c.describe() + " (graph replay)"), 0);
  }
  if (ran == 0) GTEST_SKIP() << "cuDNN cannot run any case:" << not_run;
  if (!not_run.empty()) std::cout << "[ cuDNN    ] cases cuDNN cannot run here:" << not_run << "\n";
}

}  // namespace
