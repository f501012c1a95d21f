// The MoE routing's host reference (kernels/moe/routing_reference.hpp) on hand-made cases for every
// method (groups, bias, ties, k = 1 and 8, local experts) and, on random logits for E = 8 to 512,
// against an independent double-precision implementation written from moe.md's formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/moe/routing_reference.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;
using km::RoutingMethod;

km::RoutingConfig config(RoutingMethod method, int experts, int top_k) {
  km::RoutingConfig c;
  c.method = method;
  c.experts = experts;
  c.top_k = top_k;
  c.routed_scaling_factor = 2.5f;
  c.local_num_experts = experts;
  return c;
}

km::RoutingReference route(const km::RoutingConfig& c, const std::vector<float>& logits,
                           const std::vector<float>* bias = nullptr) {
  EXPECT_EQ(km::routing_config_error(c), "");
  return km::route_reference(c, logits, bias);
}

// Over the normal range (below it the result is denormal and loses relative precision by design).
TEST(MoeRoutingReference, ExpMatchesTheLibraryToTwoUlp) {
  for (float x = -87.0f; x <= 88.0f; x += 0.01234f) {
    const double exact = std::exp(static_cast<double>(x));
    EXPECT_NEAR(km::routing_exp(x), exact, 2.5e-7 * exact) << x;
  }
  EXPECT_EQ(km::routing_exp(0.0f), 1.0f);
  EXPECT_EQ(km::routing_exp(-200.0f), 0.0f);
}

TEST(MoeRoutingReference, RenormalizeIsSoftmaxOverThePicked) {
  const auto c = config(RoutingMethod::renormalize, 8, 2);
  const auto r = route(c, {0.0f, 1.0f, 3.0f, 2.0f, -1.0f, 0.5f, -2.0f, 1.5f});
  EXPECT_EQ(r.expert_ids, (std::vector<int32_t>{2, 3}));
  const double e = std::exp(-1.0);
  EXPECT_NEAR(r.weights[0], 1.0 / (1.0 + e), 1e-6);
  EXPECT_NEAR(r.weights[1], e / (1.0 + e), 1e-6);
  // renormalize_naive is the same maths and the same path.
  auto naive = c;
  naive.method = RoutingMethod::renormalize_naive;
  const auto n = route(naive, {0.0f, 1.0f, 3.0f, 2.0f, -1.0f, 0.5f, -2.0f, 1.5f});
  EXPECT_EQ(n.expert_ids, r.expert_ids);
  EXPECT_EQ(n.weights, r.weights);
}

TEST(MoeRoutingReference, TiesGoToTheLowerExpertId) {
  const auto c = config(RoutingMethod::renormalize, 16, 8);
  const auto r = route(c, std::vector<float>(16, 0.25f));
  EXPECT_EQ(r.expert_ids, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  for (float w : r.weights) EXPECT_FLOAT_EQ(w, 0.125f);
  // A tie below the top: experts 3 and 9 share the second place.
  std::vector<float> logits(16, 0.0f);
  logits[12] = 2.0f;
  logits[9] = 1.0f;
  logits[3] = 1.0f;
  const auto t = route(config(RoutingMethod::topk, 16, 3), logits);
  EXPECT_EQ(t.expert_ids, (std::vector<int32_t>{12, 3, 9}));
  EXPECT_EQ(t.weights, (std::vector<float>{2.0f, 1.0f, 1.0f}));  // topk: the raw logits
}

TEST(MoeRoutingReference, DeepSeekBiasSteersSelectionNotWeights) {
  auto c = config(RoutingMethod::deepseek_v3, 8, 2);
  const std::vector<float> logits{2.0f, 1.0f, 0.0f, -1.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> bias{0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const auto r = route(c, logits, &bias);
  EXPECT_EQ(r.expert_ids, (std::vector<int32_t>{3, 0}));  // sigmoid(-1) + 1 beats sigmoid(2)
  const double s3 = 1.0 / (1.0 + std::exp(1.0));
  const double s0 = 1.0 / (1.0 + std::exp(-2.0));
  EXPECT_NEAR(r.weights[0], s3 / (s3 + s0) * 2.5, 1e-6);
  EXPECT_NEAR(r.weights[1], s0 / (s3 + s0) * 2.5, 1e-6);
}

TEST(MoeRoutingReference, DeepSeekGroupsScoreTheirTopTwo) {
  // Zero logits (s = 0.5); the bias sets b = 0.5 + bias. Groups of two:
  // g0 {0.9, 0.0} = 0.9, g1 {0.5, 0.5} = 1.0, g2 {0.6, 0.45} = 1.05, g3 {0.1, 0.1} = 0.2.
  // Two groups kept (g2, g1): expert 0, the best single score, is excluded with g0.
  auto c = config(RoutingMethod::deepseek_v3, 8, 2);
  c.n_group = 4;
  c.topk_group = 2;
  const std::vector<float> b{0.9f, 0.0f, 0.5f, 0.5f, 0.6f, 0.45f, 0.1f, 0.1f};
  std::vector<float> bias(8);
  for (int e = 0; e < 8; ++e) bias[static_cast<std::size_t>(e)] = b[static_cast<std::size_t>(e)] - 0.5f;
  const auto r = route(c, std::vector<float>(8, 0.0f), &bias);
  EXPECT_EQ(r.expert_ids, (std::vector<int32_t>{4, 2}));  // 2 and 3 tie: the lower id
  EXPECT_FLOAT_EQ(r.weights[0], 1.25f);
  EXPECT_FLOAT_EQ(r.weights[1], 1.25f);
}

TEST(MoeRoutingReference, Llama4PicksTheArgmaxWithASigmoidWeight) {
  const auto r = route(config(RoutingMethod::llama4, 8, 1), {0.1f, -3.0f, 0.7f, 0.7f, 0.2f, 0.0f, 0.0f, 0.0f});
  EXPECT_EQ(r.expert_ids, (std::vector<int32_t>{2}));
  EXPECT_NEAR(r.weights[0], 1.0 / (1.0 + std::exp(-0.7)), 1e-7);
}

TEST(MoeRoutingReference, CountsOnlyLocalExperts) {
  auto c = config(RoutingMethod::renormalize, 8, 2);
  c.local_expert_offset = 4;
  c.local_num_experts = 3;  // experts 4, 5, 6
  // Token 0 picks {7, 6}; token 1 picks {0, 1} (no local expert); token 2 picks {4, 6}.
  const std::vector<float> logits{0, 0, 0, 0, 0, 0, 1, 2,  //
                                  2, 1, 0, 0, 0, 0, 0, 0,  //
                                  0, 0, 0, 0, 2, 0, 1, 0};
  const auto r = route(c, logits);
  EXPECT_EQ(r.expert_ids, (std::vector<int32_t>{7, 6, 0, 1, 4, 6}));
  EXPECT_EQ(r.local_counts, (std::vector<int32_t>{1, 0, 2}));
}

TEST(MoeRoutingReference, RejectsWhatTheKernelCannotRoute) {
  auto c = config(RoutingMethod::llama4, 8, 2);
  EXPECT_NE(km::routing_config_error(c), "");
  c = config(RoutingMethod::deepseek_v3, 256, 8);
  c.n_group = 8;
  c.topk_group = 9;
  EXPECT_NE(km::routing_config_error(c), "");
  c.topk_group = 4;
  EXPECT_EQ(km::routing_config_error(c), "");
  c.n_group = 7;  // does not divide 256
  EXPECT_NE(km::routing_config_error(c), "");
  EXPECT_NE(km::routing_config_error(config(RoutingMethod::topk, 1024, 8)), "");
  EXPECT_NE(km::routing_config_error(config(RoutingMethod::topk, 8, 9)), "");
  c = config(RoutingMethod::topk, 8, 2);
  c.local_expert_offset = 6;
  c.local_num_experts = 4;
  EXPECT_NE(km::routing_config_error(c), "");
}

// moe.md's formulas in double precision, written independently of the reference.
void route_in_double(const km::RoutingConfig& c, const float* z, const float* bias, std::vector<int>& ids,
                     std::vector<double>& weights) {
  const int E = c.experts;
  std::vector<double> s(E);
  std::vector<double> b(E);
  for (int e = 0; e < E; ++e) {
    s[e] = 1.0 / (1.0 + std::exp(-static_cast<double>(z[e])));
    b[e] = c.method == RoutingMethod::deepseek_v3 ? s[e] + (bias ? bias[e] : 0.0) : z[e];
  }
  if (c.method == RoutingMethod::deepseek_v3 && c.n_group > 1) {
    const int size = E / c.n_group;
    std::vector<std::pair<double, int>> groups;
    for (int g = 0; g < c.n_group; ++g) {
      std::vector<double> m(b.begin() + g * size, b.begin() + (g + 1) * size);
      std::partial_sort(m.begin(), m.begin() + 2, m.end(), std::greater<double>());
      groups.emplace_back(-(m[0] + m[1]), g);
    }
    std::sort(groups.begin(), groups.end());
    for (int i = c.topk_group; i < c.n_group; ++i) {
      for (int e = groups[i].second * size; e < (groups[i].second + 1) * size; ++e) b[e] = -INFINITY;
    }
  }
  std::vector<int> order(E);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b[x] > b[y]; });
  ids.assign(order.begin(), order.begin() + c.top_k);
  weights.clear();
  double sum = 0.0;
  for (int id : ids) {
    if (c.method == RoutingMethod::deepseek_v3) sum += s[id];
    if (c.method == RoutingMethod::renormalize || c.method == RoutingMethod::renormalize_naive) sum += std::exp(static_cast<double>(z[id]));
  }
  for (int id : ids) {
    switch (c.method) {
      case RoutingMethod::renormalize:
      case RoutingMethod::renormalize_naive: weights.push_back(std::exp(static_cast<double>(z[id])) / sum); break;
      case RoutingMethod::deepseek_v3: weights.push_back(s[id] / sum * c.routed_scaling_factor); break;
      case RoutingMethod::llama4: weights.push_back(s[id]); break;
      case RoutingMethod::topk: weights.push_back(z[id]); break;
    }
  }
}

TEST(MoeRoutingReference, MatchesTheFormulasForEveryMethodAndSize) {
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int tokens = 64;
  for (int experts : {8, 16, 64, 128, 256, 512}) {
    for (RoutingMethod method : {RoutingMethod::renormalize, RoutingMethod::renormalize_naive, RoutingMethod::deepseek_v3,
                                 RoutingMethod::llama4, RoutingMethod::topk}) {
      for (int top_k : {1, 8}) {
        if (method == RoutingMethod::llama4 && top_k != 1) continue;
        for (int n_group : {1, 4, 8}) {
          if (n_group > 1 && method != RoutingMethod::deepseek_v3) continue;
          auto c = config(method, experts, top_k);
          c.n_group = n_group;
          c.topk_group = n_group > 1 ? n_group / 2 : 0;
          if (!km::routing_config_error(c).empty()) continue;  // e.g. top-8 of 2 groups of 2
          c.local_expert_offset = experts / 4;
          c.local_num_experts = experts / 2;
          std::vector<float> logits(static_cast<std::size_t>(tokens * experts));
          for (float& z : logits) z = normal(rng);
          std::vector<float> bias(static_cast<std::size_t>(experts));
          for (float& v : bias) v = 0.1f * normal(rng);
          const bool use_bias = method == RoutingMethod::deepseek_v3;
          const auto r = route(c, logits, use_bias ? &bias : nullptr);
          std::vector<int32_t> counts(static_cast<std::size_t>(c.local_num_experts), 0);
          for (int t = 0; t < tokens; ++t) {
            std::vector<int> ids;
            std::vector<double> weights;
            route_in_double(c, logits.data() + t * experts, use_bias ? bias.data() : nullptr, ids, weights);
            for (int j = 0; j < top_k; ++j) {
              const std::size_t at = static_cast<std::size_t>(t * top_k + j);
              ASSERT_EQ(r.expert_ids[at], ids[static_cast<std::size_t>(j)])
                  << "E " << experts << " method " << static_cast<int>(method) << " k " << top_k << " groups "
                  << n_group << " token " << t << " pick " << j;
              EXPECT_NEAR(r.weights[at], weights[static_cast<std::size_t>(j)],
                          1e-6 * std::max(1.0, std::abs(weights[static_cast<std::size_t>(j)])));
              const int local = ids[static_cast<std::size_t>(j)] - c.local_expert_offset;
              if (local >= 0 && local < c.local_num_experts) ++counts[static_cast<std::size_t>(local)];
            }
          }
          EXPECT_EQ(r.local_counts, counts);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kbench
