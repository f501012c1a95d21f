// The MoE routing kernel: one warp per token. The token's logits live in the warp's registers
// (expert lane + 32 i in slot i of lane `lane`, at most 16 slots); every selection (a group's top
// two, the kept groups, the k picks) is a warp reduction under routing_before's order, so ties go
// to the lower id exactly as in the host reference. The weights' sums run in pick order through
// shuffles, so they are the reference's sums, operation for operation.
#include <cstdint>

#include "kernels/moe/half_bits.hpp"
#include "kernels/moe/routing.hpp"
#include "kernels/moe/routing_math.hpp"

namespace kbench::kernels::moe {
namespace {

constexpr int kSlots = kMaxRoutingExperts / 32;
constexpr int kWarpsPerBlock = 4;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float negative_infinity() { return __int_as_float(0xff800000); }

__device__ __forceinline__ float load_as_float(const void* base, DType dtype, int64_t index) {
  if (dtype == DType::bfloat16) return routing_bf16_to_float(static_cast<const uint16_t*>(base)[index]);
  if (dtype == DType::float16) return half_bits_to_float(static_cast<const uint16_t*>(base)[index], true);
  return static_cast<const float*>(base)[index];
}

// The warp's best (score, id) under routing_before; every lane gets it.
__device__ __forceinline__ void warp_best(float& score, int& id) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other_score = __shfl_xor_sync(kFullMask, score, offset);
    const int other_id = __shfl_xor_sync(kFullMask, id, offset);
    if (routing_before(other_score, other_id, score, id)) {
      score = other_score;
      id = other_id;
    }
  }
}

__global__ void __launch_bounds__(kWarpsPerBlock * 32) routing_kernel(RoutingParams p) {
  const RoutingConfig& c = p.config;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t token = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (token >= p.tokens) return;  // whole warps leave together
  const bool deepseek = c.method == RoutingMethod::deepseek_v3;

  // select: the score experts are picked by; value: what the weight is made from (sigmoid for
  // deepseek_v3, the logit otherwise).
  float select[kSlots];
  float value[kSlots];
  unsigned available = 0;  // bit i: slot i holds an expert still eligible
#pragma unroll
  for (int i = 0; i < kSlots; ++i) {
    const int expert = lane + 32 * i;
    select[i] = negative_infinity();
    value[i] = 0.0f;
    if (expert < c.experts) {
      const float z = load_as_float(p.logits, p.logits_dtype, token * c.experts + expert);
      if (deepseek) {
        value[i] = routing_sigmoid(z);
        select[i] = routing_add(value[i], p.bias ? load_as_float(p.bias, p.bias_dtype, expert) : 0.0f);
      } else {
        value[i] = z;
        select[i] = z;
      }
      available |= 1u << i;
    }
  }

  if (deepseek && c.n_group > 1) {
    const int group_size = c.experts / c.n_group;
    float my_group_score = negative_infinity();  // lane g: group g's score
    for (int g = 0; g < c.n_group; ++g) {
      float best = negative_infinity();
      float second = negative_infinity();
#pragma unroll
      for (int i = 0; i < kSlots; ++i) {
        if ((available >> i & 1u) && (lane + 32 * i) / group_size == g) {
          second = fmaxf(second, fminf(best, select[i]));
          best = fmaxf(best, select[i]);
        }
      }
      for (int offset = 16; offset > 0; offset >>= 1) {
        const float other_best = __shfl_xor_sync(kFullMask, best, offset);
        const float other_second = __shfl_xor_sync(kFullMask, second, offset);
        second = fmaxf(fminf(best, other_best), fmaxf(second, other_second));
        best = fmaxf(best, other_best);
      }
      if (lane == g) my_group_score = routing_add(best, second);
    }
    unsigned kept_groups = 0;
    bool group_taken = lane >= c.n_group;
    for (int r = 0; r < c.topk_group; ++r) {
      float score = group_taken ? negative_infinity() : my_group_score;
      int id = group_taken ? INT32_MAX : lane;
      warp_best(score, id);
      kept_groups |= 1u << id;
      if (lane == id) group_taken = true;
    }
#pragma unroll
    for (int i = 0; i < kSlots; ++i) {
      // Slots past the last expert are never available (and their group index may exceed 31).
      if ((available >> i & 1u) && !(kept_groups >> ((lane + 32 * i) / group_size) & 1u)) available &= ~(1u << i);
    }
  }

  // k rounds of the warp's best eligible expert; lane j keeps pick j.
  int my_pick = -1;
  float my_value = 0.0f;
  for (int j = 0; j < c.top_k; ++j) {
    float score = negative_infinity();
    int id = INT32_MAX;
    float local_value = 0.0f;
#pragma unroll
    for (int i = 0; i < kSlots; ++i) {
      if ((available >> i & 1u) && routing_before(select[i], lane + 32 * i, score, id)) {
        score = select[i];
        id = lane + 32 * i;
        local_value = value[i];
      }
    }
    warp_best(score, id);
    const float picked_value = __shfl_sync(kFullMask, local_value, id & 31);
    if (lane == (id & 31)) available &= ~(1u << (id >> 5));
    if (lane == j) {
      my_pick = id;
      my_value = picked_value;
    }
  }

  const bool picks = lane < c.top_k;
  float weight = 0.0f;
  switch (c.method) {
    case RoutingMethod::renormalize:
    case RoutingMethod::renormalize_naive: {
      const float top = __shfl_sync(kFullMask, my_value, 0);
      const float term = picks ? routing_exp(routing_add(my_value, -top)) : 0.0f;
      float sum = 0.0f;
      for (int j = 0; j < c.top_k; ++j) sum = routing_add(sum, __shfl_sync(kFullMask, term, j));
      weight = routing_div(term, sum);
      break;
    }
    case RoutingMethod::deepseek_v3: {
      float sum = 0.0f;
      for (int j = 0; j < c.top_k; ++j) sum = routing_add(sum, __shfl_sync(kFullMask, my_value, j));
      weight = routing_mul(routing_div(my_value, routing_add(sum, kDeepSeekWeightEpsilon)), c.routed_scaling_factor);
      break;
    }
    case RoutingMethod::llama4: weight = routing_sigmoid(my_value); break;
    case RoutingMethod::topk: weight = my_value; break;
  }
  if (picks) {
    p.expert_ids[token * c.top_k + lane] = my_pick;
    p.weights[token * c.top_k + lane] = weight;
    const int local = my_pick - c.local_expert_offset;
    if (p.local_counts && local >= 0 && local < c.local_num_experts) atomicAdd(p.local_counts + local, 1);
  }
}

bool routing_dtype_supported(DType dtype) {
  return dtype == DType::float32 || dtype == DType::bfloat16 || dtype == DType::float16;
}

}  // namespace

cudaError_t launch_routing(const RoutingParams& params, cudaStream_t stream) {
  if (!routing_config_error(params.config).empty() || !routing_dtype_supported(params.logits_dtype) ||
      (params.bias && !routing_dtype_supported(params.bias_dtype)) || params.tokens < 0 || !params.expert_ids ||
      !params.weights || (params.tokens > 0 && !params.logits)) {
    return cudaErrorInvalidValue;
  }
  if (params.local_counts && params.config.local_num_experts > 0) {
    const cudaError_t zeroed = cudaMemsetAsync(
        params.local_counts, 0, static_cast<std::size_t>(params.config.local_num_experts) * sizeof(int32_t), stream);
    if (zeroed != cudaSuccess) return zeroed;
  }
  if (params.tokens == 0) return cudaSuccess;
  const int64_t blocks = (params.tokens + kWarpsPerBlock - 1) / kWarpsPerBlock;
  routing_kernel<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(params);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::moe
