// The samplers' draws follow the filtered, renormalised distribution: for every sampling routine and
// every backend that runs here, 4096 identical rows (each row draws from its own Philox stream) x 16
// offsets = 65536 draws from a small vocabulary, no draw outside the kept set, and Pearson's
// chi-square against the expected probabilities below its 1 - 1e-6 quantile.
//
// False alarm: each chi-square assertion fails a correct sampler with probability 1e-6 (the
// Wilson-Hilferty approximation of the chi-square quantile, accurate to ~1% of it at these degrees
// of freedom); the ~30 assertions of a full run together with < 1e-4. Every expected count is >= 5
// (the chi-square approximation's usual condition): the smallest kept probability below is ~1.5e-3,
// 65536 draws expect ~100 of it. The filters' parameters sit midway between two cumulative masses
// (or ratios), so no backend's float sums can move a boundary.
//
// Also: the same offset draws the same ids (also under a CUDA graph, the offset changing between
// replays), other offsets others.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kbench/cuda_stream.hpp"
#include "sampling_test_support.hpp"

namespace kbench {
namespace {

constexpr int kRows = 4096;
constexpr int kOffsets = 16;
constexpr int kVocab = 100;
constexpr uint64_t kSeed = 1234;
// The standard normal's 1 - 1e-6 quantile.
constexpr double kZ = 4.753424308822899;

// Wilson-Hilferty: the chi-square quantile of probability 1 - 1e-6 with `df` degrees of freedom.
double chi_square_quantile(int df) {
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + kZ * std::sqrt(a), 3.0);
}

// A row of distinct probabilities: Zipf's law j^-1.1 over a fixed shuffle of the vocabulary.
std::vector<double> zipf_row(int vocab, uint64_t seed) {
  std::vector<int> rank(static_cast<std::size_t>(vocab));
  std::iota(rank.begin(), rank.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(rank.begin(), rank.end(), rng);
  std::vector<double> q(static_cast<std::size_t>(vocab));
  for (int j = 0; j < vocab; ++j) q[j] = std::pow(rank[j] + 1.0, -1.1);
  const double sum = std::accumulate(q.begin(), q.end(), 0.0);
  for (double& v : q) v /= sum;
  return q;
}

std::vector<int> descending_order(const std::vector<double>& q) {
  std::vector<int> order(q.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return q[a] > q[b]; });
  return order;
}

// A top_p midway between the masses of the smallest top set reaching `target` and of that set less
// its last element (of the first `span` elements in descending order, relative to `reference`).
double midway_top_p(const std::vector<double>& q, int span, double reference, double target) {
  const std::vector<int> order = descending_order(q);
  double before = 0.0;
  for (int m = 0; m < span; ++m) {
    const double after = before + q[order[m]];
    if (after / reference >= target) return (before + after) / 2.0 / reference;
    before = after;
  }
  return 1.0;
}

// q with only `keep` kept (by position in descending order), renormalised.
std::vector<double> keep_top(const std::vector<double>& q, int keep) {
  const std::vector<int> order = descending_order(q);
  std::vector<double> out(q.size(), 0.0);
  double sum = 0.0;
  for (int m = 0; m < keep; ++m) sum += q[order[m]];
  for (int m = 0; m < keep; ++m) out[order[m]] = q[order[m]] / sum;
  return out;
}

// How many of the largest the nucleus of `top_p` keeps (relative to `reference`, within the first
// `span`): while the mass before an element is below top_p.
int nucleus_size(const std::vector<double>& q, int span, double reference, double top_p) {
  const std::vector<int> order = descending_order(q);
  double before = 0.0;
  int m = 0;
  while (m < span && before < top_p * reference) before += q[order[m++]];
  return m;
}

struct Draws {
  std::vector<int64_t> counts;
  int64_t outside = 0;  // draws of a token the expected distribution gives 0
  int64_t total = 0;
};

// Chi-square of `draws` against `expected` (Pearson, over the kept tokens).
void expect_distribution(const Draws& d, const std::vector<double>& expected, const std::string& what) {
  EXPECT_EQ(d.outside, 0) << what << ": draws outside the kept set";
  double chi2 = 0.0;
  int kept = 0;
  for (std::size_t j = 0; j < expected.size(); ++j) {
    if (expected[j] <= 0.0) continue;
    ++kept;
    const double e = expected[j] * static_cast<double>(d.total);
    ASSERT_GE(e, 5.0) << what << ": the test's own design (expected count below 5)";
    chi2 += (static_cast<double>(d.counts[j]) - e) * (static_cast<double>(d.counts[j]) - e) / e;
  }
  if (kept < 2) return;  // one token: every draw is it (checked by `outside`)
  const double limit = chi_square_quantile(kept - 1);
  EXPECT_LT(chi2, limit) << what << ": chi-square " << chi2 << " over " << kept - 1 << " degrees of freedom";
}

// Every backend of `line` that runs here, kRows identical rows `row` (probabilities or logits, as
// float32), kOffsets calls with offsets 0..kOffsets-1: the ids drawn, counted.
void check_routine(const std::string& line, const std::vector<double>& row, bool logits,
                   const std::vector<double>& expected) {
  SCOPED_TRACE(line);
  CudaStream stream;
  const int vocab = static_cast<int>(row.size());
  // The full line (the routine's required flags included) for both the case and the routine's lookup:
  // parse_case checks the required flags, so `line` alone cannot name the routine.
  const std::string full = line + " --batch_size " + std::to_string(kRows) + " --vocab_size " +
                           std::to_string(vocab) + " --input_dtype float32";
  const auto problem = testing::make_sampling_case(full, stream.get());
  std::vector<float> rows(static_cast<std::size_t>(kRows) * vocab);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int j = 0; j < vocab; ++j) rows[r * vocab + j] = static_cast<float>(logits ? std::log(row[j]) : row[j]);
  }
  KBENCH_CUDA_CHECK(cudaMemcpy(problem->input(0), rows.data(), rows.size() * sizeof(float), cudaMemcpyHostToDevice));
  const int32_t* samples = problem->sampler_params(0).output;
  for (const Backend* backend : testing::runnable_backends(testing::routine_of(full))) {
    if (!backend->can_implement(*problem)) continue;
    const auto op = backend->prepare(*problem, stream.get());
    Draws d{std::vector<int64_t>(static_cast<std::size_t>(vocab), 0), 0, 0};
    std::vector<int32_t> ids(kRows), first;
    for (int offset = 0; offset < kOffsets; ++offset) {
      problem->set_rng(kSeed, static_cast<uint64_t>(offset), stream.get());
      op->launch(stream.get(), 0);
      KBENCH_CUDA_CHECK(cudaMemcpyAsync(ids.data(), samples, ids.size() * 4, cudaMemcpyDeviceToHost, stream.get()));
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      if (offset == 0) first = ids;
      for (int32_t id : ids) {
        ++d.total;
        if (id < 0 || id >= vocab || expected[id] <= 0.0) ++d.outside;
        else ++d.counts[id];
      }
    }
    // The same seed and offset draw the same ids; offset 15 drew others.
    problem->set_rng(kSeed, 0, stream.get());
    op->launch(stream.get(), 0);
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(ids.data(), samples, ids.size() * 4, cudaMemcpyDeviceToHost, stream.get()));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    EXPECT_EQ(ids, first) << backend->name() << ": offset 0 drew other ids the second time";
    expect_distribution(d, expected, line + " [" + std::string(backend->name()) + "]");
  }
}

TEST(SamplingDistribution, SamplingFromProbsAndLogits) {
  KBENCH_REQUIRE_GPU();
  const std::vector<double> q = zipf_row(kVocab, 1);
  check_routine("--routine sampling_from_probs", q, false, q);
  check_routine("--routine sampling_from_logits", q, true, q);
}

TEST(SamplingDistribution, TopK) {
  KBENCH_REQUIRE_GPU();
  const std::vector<double> q = zipf_row(kVocab, 2);
  check_routine("--routine top_k_sampling_from_probs --top_k 20", q, false, keep_top(q, 20));
}

TEST(SamplingDistribution, TopP) {
  KBENCH_REQUIRE_GPU();
  const std::vector<double> q = zipf_row(kVocab, 3);
  const double top_p = midway_top_p(q, kVocab, 1.0, 0.8);
  char flag[64];
  std::snprintf(flag, sizeof flag, " --top_p %.9g", top_p);
  check_routine(std::string("--routine top_p_sampling_from_probs") + flag, q, false,
                keep_top(q, nucleus_size(q, kVocab, 1.0, top_p)));
}

TEST(SamplingDistribution, MinP) {
  KBENCH_REQUIRE_GPU();
  const std::vector<double> q = zipf_row(kVocab, 4);
  const std::vector<int> order = descending_order(q);
  // min_p midway between the ratios to the largest of the 15th and 16th largest: 15 kept.
  const double min_p = (q[order[14]] + q[order[15]]) / 2.0 / q[order[0]];
  char flag[64];
  std::snprintf(flag, sizeof flag, " --min_p %.9g", min_p);
  check_routine(std::string("--routine min_p_sampling_from_probs") + flag, q, false, keep_top(q, 15));
}

TEST(SamplingDistribution, TopKTopPBothOrders) {
  KBENCH_REQUIRE_GPU();
  const std::vector<double> q = zipf_row(kVocab, 5);
  constexpr int k = 30;
  const std::vector<int> order = descending_order(q);
  double top_k_mass = 0.0;
  for (int m = 0; m < k; ++m) top_k_mass += q[order[m]];
  char flags[96];
  // top_k_first: the nucleus of the renormalised top k.
  const double first = midway_top_p(q, k, top_k_mass, 0.7);
  const std::vector<double> expected_first = keep_top(q, nucleus_size(q, k, top_k_mass, first));
  // joint: the top k and the nucleus of the whole row, whichever is smaller.
  const double joint = midway_top_p(q, kVocab, 1.0, 0.5);
  const std::vector<double> expected_joint = keep_top(q, std::min(k, nucleus_size(q, kVocab, 1.0, joint)));
  for (const bool logits : {false, true}) {
    const std::string routine = logits ? "top_k_top_p_sampling_from_logits" : "top_k_top_p_sampling_from_probs";
    std::snprintf(flags, sizeof flags, " --top_k %d --top_p %.9g --filter_apply_order top_k_first", k, first);
    check_routine("--routine " + routine + flags, q, logits, expected_first);
    std::snprintf(flags, sizeof flags, " --top_k %d --top_p %.9g --filter_apply_order joint", k, joint);
    check_routine("--routine " + routine + flags, q, logits, expected_joint);
  }
}

// The two-pass samplers (rows x chunks fill the GPU): the Zipf tokens spread over a 40000-token
// vocabulary (three chunks), the rest of the row far below them; top-k alone and top-k then top-p
// from logits.
TEST(SamplingDistribution, TopKOverChunks) {
  KBENCH_REQUIRE_GPU();
  constexpr int vocab = 40000;
  const std::vector<double> zipf = zipf_row(kVocab, 8);
  std::vector<double> q(vocab);
  for (int j = 0; j < vocab; ++j) q[j] = 1e-9 * (1.0 + j % 7);
  for (int j = 0; j < kVocab; ++j) q[j * (vocab / kVocab) + 13] = zipf[j];
  check_routine("--routine top_k_sampling_from_probs --top_k 20", q, false, keep_top(q, 20));
  constexpr int k = 30;
  const std::vector<int> order = descending_order(q);
  double top_k_mass = 0.0;
  for (int m = 0; m < k; ++m) top_k_mass += q[order[m]];
  const double first = midway_top_p(q, k, top_k_mass, 0.7);
  char flags[96];
  std::snprintf(flags, sizeof flags, " --top_k %d --top_p %.9g --filter_apply_order top_k_first", k, first);
  check_routine(std::string("--routine top_k_top_p_sampling_from_logits") + flags, q, true,
                keep_top(q, nucleus_size(q, k, top_k_mass, first)));
}

// Chain speculative sampling's first emitted token follows the target distribution whatever the
// draft's, when the draft token is drawn from the draft distribution (the method's invariant): draft
// ids redrawn on the host for every call.
TEST(SamplingDistribution, ChainSpeculativeFirstTokenFollowsTheTarget) {
  KBENCH_REQUIRE_GPU();
  constexpr int vocab = 64;
  const std::vector<double> draft = zipf_row(vocab, 6);
  const std::vector<double> target = zipf_row(vocab, 7);
  const std::string line = "--routine chain_speculative_sampling --num_speculate_tokens 1 --batch_size " +
                           std::to_string(kRows) + " --vocab_size " + std::to_string(vocab);
  SCOPED_TRACE(line);
  CudaStream stream;
  const auto problem = testing::make_sampling_case(line, stream.get());
  const kernels::sampling::ChainParams io = problem->chain_params(0);
  std::vector<float> draft_rows(static_cast<std::size_t>(kRows) * vocab), target_rows(static_cast<std::size_t>(kRows) * 2 * vocab);
  for (int r = 0; r < kRows; ++r) {
    for (int j = 0; j < vocab; ++j) {
      draft_rows[r * vocab + j] = static_cast<float>(draft[j]);
      target_rows[(r * 2) * vocab + j] = static_cast<float>(target[j]);
      target_rows[(r * 2 + 1) * vocab + j] = static_cast<float>(target[j]);
    }
  }
  // The case's input buffers, written with this test's rows (the case owns them; the kernels only read).
  KBENCH_CUDA_CHECK(cudaMemcpy(const_cast<float*>(io.draft_probs), draft_rows.data(), draft_rows.size() * 4,
                               cudaMemcpyHostToDevice));
  KBENCH_CUDA_CHECK(cudaMemcpy(const_cast<float*>(io.target_probs), target_rows.data(), target_rows.size() * 4,
                               cudaMemcpyHostToDevice));
  std::discrete_distribution<int32_t> from_draft(draft.begin(), draft.end());
  for (const Backend* backend : testing::runnable_backends(testing::routine_of(line))) {
    const auto op = backend->prepare(*problem, stream.get());
    std::mt19937_64 host_rng(99);
    Draws d{std::vector<int64_t>(vocab, 0), 0, 0};
    std::vector<int32_t> ids(static_cast<std::size_t>(kRows) * 2), drafted(kRows);
    for (int offset = 0; offset < kOffsets; ++offset) {
      for (int32_t& t : drafted) t = from_draft(host_rng);
      KBENCH_CUDA_CHECK(cudaMemcpy(const_cast<int32_t*>(io.draft_ids), drafted.data(), drafted.size() * 4,
                                   cudaMemcpyHostToDevice));
      problem->set_rng(kSeed, static_cast<uint64_t>(offset), stream.get());
      op->launch(stream.get(), 0);
      KBENCH_CUDA_CHECK(cudaMemcpyAsync(ids.data(), io.output_ids, ids.size() * 4, cudaMemcpyDeviceToHost, stream.get()));
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      for (int r = 0; r < kRows; ++r) {
        const int32_t first = ids[r * 2];
        ++d.total;
        if (first < 0 || first >= vocab) ++d.outside;
        else ++d.counts[first];
      }
    }
    expect_distribution(d, target, line + " [" + std::string(backend->name()) + "]");
  }
}

// Under a CUDA graph the seed and offset are read at every replay: replays with the offset changed
// in between draw other ids; the same offset again, the same ids.
TEST(SamplingDistribution, GraphReplaysReadTheOffsetOfTheMoment) {
  KBENCH_REQUIRE_GPU();
  CudaStream stream;
  const std::string line = "--routine top_p_sampling_from_probs --batch_size 64 --vocab_size 50257 --top_p 0.9";
  const auto problem = testing::make_sampling_case(line, stream.get());
  const int32_t* samples = problem->sampler_params(0).output;
  for (const Backend* backend : testing::runnable_backends(testing::routine_of(line))) {
    SCOPED_TRACE(std::string(backend->name()));
    const auto op = backend->prepare(*problem, stream.get());
    op->launch(stream.get(), 0);  // a direct call first: lazy initialisation outside the capture
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    cudaGraph_t graph = nullptr;
    KBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal));
    op->launch(stream.get(), 0);
    KBENCH_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
    cudaGraphExec_t exec = nullptr;
    KBENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const auto replay = [&](uint64_t offset) {
      problem->set_rng(kSeed, offset, stream.get());
      KBENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
      std::vector<int32_t> ids(64);
      KBENCH_CUDA_CHECK(cudaMemcpyAsync(ids.data(), samples, ids.size() * 4, cudaMemcpyDeviceToHost, stream.get()));
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      return ids;
    };
    const auto a = replay(1), b = replay(2), c = replay(1);
    EXPECT_EQ(a, c);
    EXPECT_NE(a, b);
    KBENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
    KBENCH_CUDA_CHECK(cudaGraphDestroy(graph));
  }
}

}  // namespace
}  // namespace kbench
