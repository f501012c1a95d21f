// kbench's sampling row kernels through their own API, where the routines' inputs never go: rows
// shorter than k (and empty) in the transforms, rows of one repeated value (every element tied at the
// k-th: the candidate list overflows and the whole-row radix select takes over), and the plans (one
// CTA per row for short rows, clusters for long ones, 16 CTAs for a lone row).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/sampling/sampling.hpp"
#include "routines/sampling/sampling_checks.hpp"

namespace kbench {
namespace {

namespace ks = kernels::sampling;
using testing::to_host;

bool on_sm90_or_later() {
  cudaDeviceProp prop{};
  return cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major >= 9;
}

std::vector<float> as_floats(const std::vector<int32_t>& v) { return {v.begin(), v.end()}; }

// top_k (values and indices) of the float32 rows `host`, uploaded in `input`, checked against the
// host's; returns the plan the kernels took.
ks::RowPlan check_top_k_of(const DeviceBuffer& input, const std::vector<float>& host, int64_t rows, int64_t cols,
                           int64_t k, cudaStream_t stream) {
  DeviceBuffer values(rows * k * 4), indices(rows * k * 8);
  ks::TopKParams t;
  t.input = input.get();
  t.rows = rows;
  t.cols = cols;
  t.k = k;
  t.values = values.get();
  t.indices = indices.as<int64_t>();
  ks::RowPlan plan;
  EXPECT_EQ(ks::plan_top_k(t, &plan), cudaSuccess);
  DeviceBuffer workspace(std::max<std::size_t>(plan.workspace_bytes, 1));
  t.workspace = workspace.get();
  EXPECT_EQ(ks::launch_top_k(t, plan, stream), cudaSuccess);
  const auto idx = to_host<int64_t>(indices.get(), rows * k, stream);
  const auto vals = to_host<float>(values.get(), rows * k, stream);
  const auto checks = check_top_k(rows, cols, k, host, vals, std::vector<float>(idx.begin(), idx.end()), {1e-3, 1e-5});
  EXPECT_EQ(checks[0].mismatches + checks[1].mismatches, 0);
  return plan;
}

TEST(SamplingKernels, TransformsWithRowsShorterThanK) {
  KBENCH_REQUIRE_GPU();
  if (!on_sm90_or_later()) GTEST_SKIP() << "kbench's sampling kernels need sm_90";
  CudaStream stream;
  constexpr int64_t rows = 6, cols = 5000, k = 100;
  const std::vector<int32_t> lengths = {5000, 100, 99, 1, 0, 2500};
  std::vector<int32_t> offsets(rows);
  for (int64_t r = 0; r < rows; ++r) offsets[r] = static_cast<int32_t>(1000 * r);
  DeviceBuffer scores(rows * cols * 4), table(rows * cols * 4), lengths_d(rows * 4), offsets_d(rows * 4), out(rows * k * 4);
  KBENCH_CUDA_CHECK(ks::fill_logits(scores.get(), DType::float32, rows, cols, 7, ks::Distribution::flat, stream.get()));
  KBENCH_CUDA_CHECK(ks::fill_uniform_ints(table.as<int32_t>(), rows * cols, 1000, 8, stream.get()));
  KBENCH_CUDA_CHECK(cudaMemcpy(lengths_d.get(), lengths.data(), rows * 4, cudaMemcpyHostToDevice));
  KBENCH_CUDA_CHECK(cudaMemcpy(offsets_d.get(), offsets.data(), rows * 4, cudaMemcpyHostToDevice));
  const auto host_scores = to_host<float>(scores.get(), rows * cols, stream.get());
  const auto host_table = to_host<int32_t>(table.get(), rows * cols, stream.get());
  for (const ks::TopKOutput mode : {ks::TopKOutput::page_table, ks::TopKOutput::ragged}) {
    ks::TopKParams p;
    p.output = mode;
    p.input = scores.get();
    p.rows = rows;
    p.cols = cols;
    p.k = k;
    p.lengths = lengths_d.as<const int32_t>();
    p.page_table = table.as<const int32_t>();
    p.page_table_stride = cols;
    p.offsets = offsets_d.as<const int32_t>();
    p.mapped = out.as<int32_t>();
    ks::RowPlan plan;
    ASSERT_EQ(ks::plan_top_k(p, &plan), cudaSuccess);
    KBENCH_CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
    ASSERT_EQ(ks::launch_top_k(p, plan, stream.get()), cudaSuccess);
    const auto got = as_floats(to_host<int32_t>(out.get(), rows * k, stream.get()));
    const bool paged = mode == ks::TopKOutput::page_table;
    const std::vector<float> table_f = paged ? as_floats(host_table) : std::vector<float>{};
    const Comparison c = check_transform(rows, cols, k, host_scores, table_f, offsets, lengths, got);
    EXPECT_EQ(c.mismatches, 0) << (paged ? "page table" : "ragged");
  }
}

// Rows of one value: every element is tied at the k-th largest. top_k still gives exactly k distinct
// indices; the mask and the renorm keep them all (at least k, each renormalised).
TEST(SamplingKernels, RowsOfOneRepeatedValue) {
  KBENCH_REQUIRE_GPU();
  if (!on_sm90_or_later()) GTEST_SKIP() << "kbench's sampling kernels need sm_90";
  CudaStream stream;
  constexpr int64_t rows = 3, cols = 10007, k = 100;
  const std::vector<float> host(rows * cols, 0.25f);
  DeviceBuffer input(rows * cols * 4), out(rows * cols * 4);
  KBENCH_CUDA_CHECK(cudaMemcpy(input.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  ks::RowPlan plan = check_top_k_of(input, host, rows, cols, k, stream.get());

  for (const ks::FilterOp op : {ks::FilterOp::top_k_mask, ks::FilterOp::top_k_renorm}) {
    ks::FilterParams f;
    f.op = op;
    f.input = input.get();
    f.rows = rows;
    f.cols = cols;
    f.top_k = k;
    f.output = out.get();
    ASSERT_EQ(ks::plan_filter(f, &plan), cudaSuccess);
    ASSERT_EQ(ks::launch_filter(f, plan, stream.get()), cudaSuccess);
    const auto got = to_host<float>(out.get(), rows * cols, stream.get());
    const Comparison c = op == ks::FilterOp::top_k_mask ? check_top_k_mask(rows, cols, k, host, got, {1e-3, 1e-5})
                                                         : check_top_k_renorm(rows, cols, k, host, got, {1e-2, 1e-2});
    EXPECT_EQ(c.mismatches, 0) << (op == ks::FilterOp::top_k_mask ? "mask" : "renorm");
  }
}

// The two-pass plan on rows built against its sample (row_kernels.cuh): ascending rows (the sample's
// largest values are far from the row's: more candidates than the merge's list holds) and rows
// whose 128 largest values sit where the sample looks (fewer than k at or above the estimate).
// Both take the merge's whole-row select: top_k stays exact and the top-k sampler draws inside the
// top-k set. The other rows are random, as the plan expects.
TEST(SamplingKernels, TwoPassRowsBuiltAgainstTheSample) {
  KBENCH_REQUIRE_GPU();
  if (!on_sm90_or_later()) GTEST_SKIP() << "kbench's sampling kernels need sm_90";
  CudaStream stream;
  constexpr int64_t rows = 300, cols = 65536, k = 256;
  std::vector<float> host(rows * cols);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  const auto uniform = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(state >> 40) * 0x1p-24f;
  };
  for (int64_t r = 0; r < rows; ++r) {
    float* row = host.data() + r * cols;
    for (int64_t c = 0; c < cols; ++c) row[c] = r % 3 == 0 ? static_cast<float>(c + 1) / cols : 0.5f * uniform();
    if (r % 3 == 1) {  // 4 elements at the start of each of the sample's 32 segments
      for (int64_t s = 0; s < 32; ++s) {
        for (int64_t i = 0; i < 4; ++i) row[s * cols / 32 + i] = 1.0f + 0.001f * static_cast<float>(4 * s + i);
      }
    }
  }
  DeviceBuffer input(rows * cols * 4), drawn(rows * 4), rng(16);
  KBENCH_CUDA_CHECK(cudaMemcpy(input.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  const uint64_t seed_offset[2] = {42, 0};
  KBENCH_CUDA_CHECK(cudaMemcpy(rng.get(), seed_offset, 16, cudaMemcpyHostToDevice));
  ks::RowPlan plan = check_top_k_of(input, host, rows, cols, k, stream.get());
  EXPECT_GT(plan.chunks, 0) << "the case must take the two-pass plan";

  ks::SamplerParams s;
  s.input = input.get();
  s.rows = rows;
  s.vocab = cols;
  s.top_k = k;
  s.rng = rng.as<const uint64_t>();
  s.output = drawn.as<int32_t>();
  ASSERT_EQ(ks::plan_sampler(s, &plan), cudaSuccess);
  ASSERT_GT(plan.chunks, 0);
  DeviceBuffer sampler_workspace(plan.workspace_bytes);
  s.workspace = sampler_workspace.get();
  ASSERT_EQ(ks::launch_sampler(s, plan, stream.get()), cudaSuccess);
  const auto ids = to_host<int32_t>(drawn.get(), rows, stream.get());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> row(host.begin() + r * cols, host.begin() + (r + 1) * cols);
    std::nth_element(row.begin(), row.begin() + (k - 1), row.end(), std::greater<>());
    ASSERT_TRUE(ids[r] >= 0 && ids[r] < cols) << "row " << r;
    EXPECT_GE(host[r * cols + ids[r]], row[k - 1]) << "row " << r << ": the drawn token is outside the top k";
  }
}

// Plans: a row that fits one CTA's target slice gets one CTA; a batch that fills the GPU gets the
// clusters its rows' bytes ask for; a lone long row spreads over 16 CTAs (8 where no 16-CTA cluster
// fits). Every plan's slices cover the row.
TEST(SamplingKernels, PlansSpreadRowsByLengthAndBatch) {
  KBENCH_REQUIRE_GPU();
  if (!on_sm90_or_later()) GTEST_SKIP() << "kbench's sampling kernels need sm_90";
  const auto plan_of = [](int64_t rows, int64_t vocab) {
    ks::SamplerParams s;
    s.rows = rows;
    s.vocab = vocab;
    s.top_p = 0.9f;
    ks::RowPlan plan;
    EXPECT_EQ(ks::plan_sampler(s, &plan), cudaSuccess);
    EXPECT_GE(plan.slice * plan.cluster, vocab);
    EXPECT_LT(plan.slice * (plan.cluster - 1), vocab);
    return plan;
  };
  EXPECT_EQ(plan_of(4096, 1000).cluster, 1);
  EXPECT_EQ(plan_of(256, 128256).cluster, 8);
  const int lone = plan_of(1, 128256).cluster;
  EXPECT_TRUE(lone == 16 || lone == 8) << lone;
  // Beyond 16 CTAs' shared memory: refused, not mislaunched.
  ks::SamplerParams huge;
  huge.rows = 1;
  huge.vocab = 8'000'000;
  ks::RowPlan plan;
  EXPECT_EQ(ks::plan_sampler(huge, &plan), cudaErrorNotSupported);

  // Softmax of batches that fill the GPU: slices that cover the row, at most 16 CTAs.
  for (const int64_t cols : {int64_t{128256}, int64_t{50257}, int64_t{1001}}) {
    ks::FilterParams f;
    f.op = ks::FilterOp::softmax;
    f.rows = 4096;
    f.cols = cols;
    ks::RowPlan softmax;
    ASSERT_EQ(ks::plan_filter(f, &softmax), cudaSuccess) << cols;
    EXPECT_GE(softmax.slice * softmax.cluster, cols) << cols;
    EXPECT_LT(softmax.slice * (softmax.cluster - 1), cols) << cols;
    EXPECT_LE(softmax.cluster, 16) << cols;
  }
}

}  // namespace
}  // namespace kbench
