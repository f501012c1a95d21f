// kbench's MoE routing: per token, the top-k experts and their weights for every routing method of
// the reference (../shared/spec/moe.md), fused with the histogram of tokens per local expert (the
// permutation's input). Plain structs and a cudaError_t launch; knows nothing of the harness.
//
// Semantics (host reference: routing_reference.hpp; arithmetic: routing_math.hpp, bit-identical
// on host and device):
//   renormalize, renormalize_naive: the k largest logits z; weight_j = exp(z_j - z_0) / sum over
//     the picked of exp(z_i - z_0), summed in pick order. renormalize_naive (softmax over all E,
//     then top-k, then renormalise) is the same maths and, as in the reference's trtllm kernel, runs
//     the same path.
//   deepseek_v3: s = sigmoid(z), b = s + bias (bias absent: 0). With n_group > 1 the experts form
//     n_group contiguous groups; a group's score is its largest b plus its second largest b; the
//     topk_group best groups are kept, the other experts excluded. The k largest b among the kept
//     are picked; weight_j = s_j / (sum of picked s + 1e-20) * routed_scaling_factor.
//   llama4 (k = 1): the largest z; weight = sigmoid(z).
//   topk: the k largest z; weight = z.
// Ties: equal scores (experts, and groups) are taken lower id first, so the picks are
// deterministic. Picks are written best first.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kbench/dtype.hpp"

namespace kbench::kernels::moe {

// The reference's enum values (flashinfer/tllm_enums.py RoutingMethodType).
enum class RoutingMethod : int { renormalize = 1, deepseek_v3 = 2, llama4 = 3, renormalize_naive = 4, topk = 5 };

// The kernel keeps a token's logits in one warp's registers: at most 16 per lane (b12x's 512
// experts).
inline constexpr int kMaxRoutingExperts = 512;
// At most one pick per lane of the warp.
inline constexpr int kMaxRoutingTopK = 32;
inline constexpr int kMaxRoutingGroups = 32;

struct RoutingConfig {
  RoutingMethod method = RoutingMethod::deepseek_v3;
  int experts = 0;
  int top_k = 0;
  int n_group = 0;     // <= 1: no groups (deepseek_v3 only)
  int topk_group = 0;  // groups kept when n_group > 1
  float routed_scaling_factor = 1.0f;  // deepseek_v3 only
  int local_expert_offset = 0;
  int local_num_experts = 0;  // experts [offset, offset + local) are this rank's
};

// Empty when the kernel (and the host reference) can route with `config`, else why not.
inline std::string routing_config_error(const RoutingConfig& c) {
  if (c.experts < 1 || c.experts > kMaxRoutingExperts) return "routing supports 1 to 512 experts";
  if (c.top_k < 1 || c.top_k > kMaxRoutingTopK || c.top_k > c.experts) return "top_k must be in [1, min(32, experts)]";
  if (c.method == RoutingMethod::llama4 && c.top_k != 1) return "llama4 routing needs top_k = 1";
  if (c.method == RoutingMethod::deepseek_v3 && c.n_group > 1) {
    if (c.n_group > kMaxRoutingGroups || c.experts % c.n_group != 0) return "n_group must divide the experts (at most 32 groups)";
    if (c.experts / c.n_group < 2) return "deepseek_v3 groups need at least 2 experts (a group scores its top 2)";
    if (c.topk_group < 1 || c.topk_group > c.n_group) return "topk_group must be in [1, n_group]";
    if (c.top_k > c.topk_group * (c.experts / c.n_group)) return "top_k exceeds the experts of the kept groups";
  }
  if (c.local_expert_offset < 0 || c.local_num_experts < 0 || c.local_expert_offset + c.local_num_experts > c.experts) {
    return "local experts must lie within [0, experts)";
  }
  return {};
}

struct RoutingParams {
  RoutingConfig config;
  const void* logits = nullptr;  // [tokens][experts]
  DType logits_dtype = DType::float32;  // float32, bfloat16 or float16
  const void* bias = nullptr;  // [experts], deepseek_v3 only; nullptr: none
  DType bias_dtype = DType::bfloat16;  // float32, bfloat16 or float16
  int64_t tokens = 0;
  int32_t* expert_ids = nullptr;  // [tokens][top_k], best first
  float* weights = nullptr;       // [tokens][top_k]
  // [local_num_experts]: picks of each local expert (expert_ids - local_expert_offset). Zeroed by the
  // launch (a memset on the stream), so it is graph-safe. May be nullptr when local_num_experts = 0.
  int32_t* local_counts = nullptr;
};

// Enqueues the routing on `stream`: no host synchronisation, no allocation. cudaErrorInvalidValue
// when routing_config_error is not empty or a dtype is unsupported.
cudaError_t launch_routing(const RoutingParams& params, cudaStream_t stream);

}  // namespace kbench::kernels::moe
