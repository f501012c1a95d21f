// kbench's sampling row kernels through their own API, where the routines' inputs never go: rows
// shorter than k (and empty) in the transforms, rows of one repeated value (every element tied at the
// k-th: the candidate list overflows and the whole-row radix select takes over), and the plans (one
// CTA per row for short rows, clusters for long ones, 16 CTAs for a lone row).
#include <gtest/gtest.h>

#include <cstdint>
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
  DeviceBuffer input(rows * cols * 4), values(rows * k * 4), indices(rows * k * 8), out(rows * cols * 4);
  KBENCH_CUDA_CHECK(cudaMemcpy(input.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice));

  ks::TopKParams t;
  t.input = input.get();
  t.rows = rows;
  t.cols = cols;
  t.k = k;
  t.values = values.get();
  t.indices = indices.as<int64_t>();
  ks::RowPlan plan;
  ASSERT_EQ(ks::plan_top_k(t, &plan), cudaSuccess);
  ASSERT_EQ(ks::launch_top_k(t, plan, stream.get()), cudaSuccess);
  const auto idx = to_host<int64_t>(indices.get(), rows * k, stream.get());
  const auto vals = to_host<float>(values.get(), rows * k, stream.get());
  const auto checks = check_top_k(rows, cols, k, host, vals, std::vector<float>(idx.begin(), idx.end()), {1e-3, 1e-5});
  EXPECT_EQ(checks[0].mismatches + checks[1].mismatches, 0);

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
}

}  // namespace
}  // namespace kbench
