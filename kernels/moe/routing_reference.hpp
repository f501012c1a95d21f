// The host reference of kbench's MoE routing (semantics: routing.hpp), deliberately simple: a full
// sort of the candidates per token. Header-only so the CPU tests use it without the kernels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/moe/routing.hpp"
#include "kernels/moe/routing_math.hpp"

namespace kbench::kernels::moe {

// One token: `logits` [experts] (already float), `bias` [experts] or nullptr. Writes top_k ids
// (best first) and weights. `config` must pass routing_config_error.
inline void route_token_reference(const RoutingConfig& c, const float* logits, const float* bias, int32_t* ids,
                                  float* weights) {
  const int E = c.experts;
  const bool deepseek = c.method == RoutingMethod::deepseek_v3;
  std::vector<float> select(E);
  std::vector<float> sig(E);
  for (int e = 0; e < E; ++e) {
    if (deepseek) {
      sig[e] = routing_sigmoid(logits[e]);
      select[e] = routing_add(sig[e], bias ? bias[e] : 0.0f);
    } else {
      select[e] = logits[e];
    }
  }
  std::vector<bool> eligible(E, true);
  if (deepseek && c.n_group > 1) {
    const int size = E / c.n_group;
    std::vector<float> group_score(c.n_group);
    for (int g = 0; g < c.n_group; ++g) {
      std::vector<float> members(select.begin() + g * size, select.begin() + (g + 1) * size);
      std::sort(members.begin(), members.end(), std::greater<float>());
      group_score[g] = routing_add(members[0], members[1]);
    }
    std::vector<int> groups(c.n_group);
    std::iota(groups.begin(), groups.end(), 0);
    std::sort(groups.begin(), groups.end(),
              [&](int a, int b) { return routing_before(group_score[a], a, group_score[b], b); });
    std::vector<bool> kept(c.n_group, false);
    for (int i = 0; i < c.topk_group; ++i) kept[groups[i]] = true;
    for (int e = 0; e < E; ++e) eligible[e] = kept[e / size];
  }
  std::vector<int> order;
  for (int e = 0; e < E; ++e) {
    if (eligible[e]) order.push_back(e);
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) { return routing_before(select[a], a, select[b], b); });
  for (int j = 0; j < c.top_k; ++j) ids[j] = order[j];

  switch (c.method) {
    case RoutingMethod::renormalize:
    case RoutingMethod::renormalize_naive: {
      const float top = logits[ids[0]];
      float sum = 0.0f;
      for (int j = 0; j < c.top_k; ++j) sum = routing_add(sum, routing_exp(routing_add(logits[ids[j]], -top)));
      for (int j = 0; j < c.top_k; ++j) weights[j] = routing_div(routing_exp(routing_add(logits[ids[j]], -top)), sum);
      break;
    }
    case RoutingMethod::deepseek_v3: {
      float sum = 0.0f;
      for (int j = 0; j < c.top_k; ++j) sum = routing_add(sum, sig[ids[j]]);
      const float denominator = routing_add(sum, kDeepSeekWeightEpsilon);
      for (int j = 0; j < c.top_k; ++j) {
        weights[j] = routing_mul(routing_div(sig[ids[j]], denominator), c.routed_scaling_factor);
      }
      break;
    }
    case RoutingMethod::llama4: weights[0] = routing_sigmoid(logits[ids[0]]); break;
    case RoutingMethod::topk:
      for (int j = 0; j < c.top_k; ++j) weights[j] = logits[ids[j]];
      break;
  }
}

struct RoutingReference {
  std::vector<int32_t> expert_ids;    // [tokens][top_k]
  std::vector<float> weights;         // [tokens][top_k]
  std::vector<int32_t> local_counts;  // [local_num_experts]
};

// Every token of `logits` [tokens][experts].
inline RoutingReference route_reference(const RoutingConfig& c, const std::vector<float>& logits,
                                        const std::vector<float>* bias) {
  const int64_t tokens = static_cast<int64_t>(logits.size()) / c.experts;
  RoutingReference out;
  out.expert_ids.resize(static_cast<std::size_t>(tokens * c.top_k));
  out.weights.resize(out.expert_ids.size());
  out.local_counts.assign(static_cast<std::size_t>(c.local_num_experts), 0);
  for (int64_t t = 0; t < tokens; ++t) {
    route_token_reference(c, logits.data() + t * c.experts, bias ? bias->data() : nullptr,
                          out.expert_ids.data() + t * c.top_k, out.weights.data() + t * c.top_k);
    for (int j = 0; j < c.top_k; ++j) {
      const int local = out.expert_ids[static_cast<std::size_t>(t * c.top_k + j)] - c.local_expert_offset;
      if (local >= 0 && local < c.local_num_experts) ++out.local_counts[static_cast<std::size_t>(local)];
    }
  }
  return out;
}

}  // namespace kbench::kernels::moe
