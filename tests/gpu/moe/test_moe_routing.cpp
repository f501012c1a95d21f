// The MoE routing kernel (kernels/moe/routing.hpp) against its host reference, bit for bit: expert
// ids, weights (routing_math.hpp makes the arithmetic identical) and the local experts' histogram,
// for every method, fp32 and bf16 logits, with and without bias and groups, k = 1, 8 and 22, E = 8
// to 512, local expert windows (tokens routed only to non-local experts included), ties, and empty
// batches. Outputs are poisoned before every launch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/moe/routing.hpp"
#include "kernels/moe/routing_reference.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;
using km::RoutingMethod;

struct Case {
  RoutingMethod method;
  int experts;
  int top_k;
  int n_group = 0;
  int topk_group = 0;
  bool bias = false;
  DType logits_dtype = DType::float32;
  int local_expert_offset = 0;
  int local_num_experts = -1;  // -1: all
  int64_t tokens = 257;
  bool ties = false;  // logits drawn from 4 values: most picks are ties
};

uint16_t bf16_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}
float bf16_truncated(float value) { return km::routing_bf16_to_float(bf16_bits(value)); }

std::string describe(const Case& c) {
  return "method " + std::to_string(static_cast<int>(c.method)) + " E " + std::to_string(c.experts) + " k " +
         std::to_string(c.top_k) + " groups " + std::to_string(c.n_group) + "/" + std::to_string(c.topk_group) +
         (c.bias ? " bias" : "") + (c.logits_dtype == DType::bfloat16 ? " bf16" : " fp32") + " local " +
         std::to_string(c.local_expert_offset) + "+" + std::to_string(c.local_num_experts) + " T " +
         std::to_string(c.tokens) + (c.ties ? " ties" : "");
}

void expect_kernel_matches_reference(const Case& k, uint32_t seed) {
  SCOPED_TRACE(describe(k));
  km::RoutingConfig c;
  c.method = k.method;
  c.experts = k.experts;
  c.top_k = k.top_k;
  c.n_group = k.n_group;
  c.topk_group = k.topk_group;
  c.routed_scaling_factor = 2.5f;
  c.local_expert_offset = k.local_expert_offset;
  c.local_num_experts = k.local_num_experts < 0 ? k.experts : k.local_num_experts;
  ASSERT_EQ(km::routing_config_error(c), "");

  // Inputs exactly representable in the logits' dtype, so host and device see the same values.
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> logits(static_cast<std::size_t>(k.tokens * k.experts));
  for (float& z : logits) {
    z = k.ties ? 0.5f * std::floor(2.0f * std::tanh(normal(rng))) : normal(rng);
    if (k.logits_dtype == DType::bfloat16) z = bf16_truncated(z);
  }
  std::vector<float> bias(static_cast<std::size_t>(k.experts));
  for (float& b : bias) b = bf16_truncated(k.ties ? 0.1f : 0.1f * normal(rng));
  const auto expected = km::route_reference(c, logits, k.bias ? &bias : nullptr);

  std::vector<uint16_t> logits_bf16(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) logits_bf16[i] = bf16_bits(logits[i]);
  std::vector<uint16_t> bias_bf16(bias.size());
  for (std::size_t i = 0; i < bias.size(); ++i) bias_bf16[i] = bf16_bits(bias[i]);

  CudaStream stream;
  const std::size_t picks = static_cast<std::size_t>(k.tokens * k.top_k);
  DeviceBuffer logits_device(std::max<std::size_t>(1, logits.size() * sizeof(float)));
  DeviceBuffer bias_device(bias.size() * sizeof(uint16_t));
  DeviceBuffer ids_device(std::max<std::size_t>(1, picks) * sizeof(int32_t));
  DeviceBuffer weights_device(std::max<std::size_t>(1, picks) * sizeof(float));
  DeviceBuffer counts_device(std::max(1, c.local_num_experts) * sizeof(int32_t));
  if (k.logits_dtype == DType::bfloat16) {
    testing::to_device(static_cast<char*>(logits_device.get()), logits_bf16, stream.get());
  } else {
    testing::to_device(static_cast<char*>(logits_device.get()), logits, stream.get());
  }
  testing::to_device(static_cast<char*>(bias_device.get()), bias_bf16, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(ids_device.get(), 0xff, ids_device.bytes(), stream.get()));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(weights_device.get(), 0xff, weights_device.bytes(), stream.get()));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(counts_device.get(), 0x5a, counts_device.bytes(), stream.get()));

  km::RoutingParams p;
  p.config = c;
  p.logits = logits_device.get();
  p.logits_dtype = k.logits_dtype;
  p.bias = k.bias ? bias_device.get() : nullptr;
  p.bias_dtype = DType::bfloat16;
  p.tokens = k.tokens;
  p.expert_ids = ids_device.as<int32_t>();
  p.weights = weights_device.as<float>();
  p.local_counts = c.local_num_experts > 0 ? counts_device.as<int32_t>() : nullptr;
  ASSERT_EQ(km::launch_routing(p, stream.get()), cudaSuccess);

  const auto ids = testing::to_host<int32_t>(ids_device.get(), static_cast<int64_t>(picks), stream.get());
  const auto weights = testing::to_host<float>(weights_device.get(), static_cast<int64_t>(picks), stream.get());
  const auto counts = testing::to_host<int32_t>(counts_device.get(), c.local_num_experts, stream.get());
  KBENCH_CUDA_CHECK(cudaGetLastError());
  ASSERT_EQ(ids, expected.expert_ids);
  for (std::size_t i = 0; i < picks; ++i) {
    uint32_t got;
    uint32_t want;
    std::memcpy(&got, &weights[i], sizeof got);
    std::memcpy(&want, &expected.weights[i], sizeof want);
    ASSERT_EQ(got, want) << "pick " << i << ": " << weights[i] << " vs " << expected.weights[i];
  }
  EXPECT_EQ(counts, expected.local_counts);
}

TEST(MoeRoutingKernel, EveryMethodMatchesTheHostReferenceExactly) {
  KBENCH_REQUIRE_GPU();
  uint32_t seed = 1;
  for (int experts : {8, 16, 72, 128, 256, 512}) {
    for (RoutingMethod method : {RoutingMethod::renormalize, RoutingMethod::renormalize_naive, RoutingMethod::deepseek_v3,
                                 RoutingMethod::llama4, RoutingMethod::topk}) {
      for (int top_k : {1, 2, 8, 22}) {
        if ((method == RoutingMethod::llama4 && top_k != 1) || top_k > experts) continue;
        for (DType dtype : {DType::float32, DType::bfloat16}) {
          Case k{method, experts, top_k};
          k.logits_dtype = dtype;
          k.bias = method == RoutingMethod::deepseek_v3;
          expect_kernel_matches_reference(k, seed++);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(MoeRoutingKernel, DeepSeekGroupsMatchTheHostReferenceExactly) {
  KBENCH_REQUIRE_GPU();
  uint32_t seed = 100;
  const Case cases[] = {
      {RoutingMethod::deepseek_v3, 256, 8, 8, 4, true},   // DeepSeek-V3
      {RoutingMethod::deepseek_v3, 256, 8, 8, 4, false},  // no bias
      {RoutingMethod::deepseek_v3, 256, 1, 8, 1, true},
      {RoutingMethod::deepseek_v3, 128, 8, 32, 4, true},  // groups of 4
      {RoutingMethod::deepseek_v3, 64, 6, 8, 3, true},
      {RoutingMethod::deepseek_v3, 8, 2, 4, 2, true},     // groups of 2
      {RoutingMethod::deepseek_v3, 160, 6, 8, 3, true},   // 5 slots per lane, partly filled
      {RoutingMethod::deepseek_v3, 512, 22, 16, 4, true}, // 16 slots per lane, b12x's top-22
  };
  for (Case k : cases) {
    expect_kernel_matches_reference(k, seed++);
    if (HasFatalFailure()) return;
    k.logits_dtype = DType::bfloat16;
    expect_kernel_matches_reference(k, seed++);
    if (HasFatalFailure()) return;
  }
}

TEST(MoeRoutingKernel, TiesGoToTheLowerExpertIdAsOnTheHost) {
  KBENCH_REQUIRE_GPU();
  uint32_t seed = 200;
  for (RoutingMethod method : {RoutingMethod::renormalize, RoutingMethod::topk, RoutingMethod::llama4}) {
    Case k{method, 64, method == RoutingMethod::llama4 ? 1 : 8};
    k.ties = true;
    expect_kernel_matches_reference(k, seed++);
    if (HasFatalFailure()) return;
  }
  Case grouped{RoutingMethod::deepseek_v3, 256, 8, 8, 4, true};
  grouped.ties = true;  // tied group scores too
  expect_kernel_matches_reference(grouped, seed++);
}

TEST(MoeRoutingKernel, CountsOnlyLocalExperts) {
  KBENCH_REQUIRE_GPU();
  Case k{RoutingMethod::deepseek_v3, 256, 8, 8, 4, true};
  k.tokens = 4096;
  k.local_expert_offset = 64;  // EP rank 2 of 8 with 32 experts each: many tokens pick none of them
  k.local_num_experts = 32;
  expect_kernel_matches_reference(k, 300);
  k.local_expert_offset = 0;
  k.local_num_experts = 0;  // no local expert at all: no histogram
  expect_kernel_matches_reference(k, 301);
  Case single{RoutingMethod::renormalize, 8, 1};
  single.local_expert_offset = 7;
  single.local_num_experts = 1;
  expect_kernel_matches_reference(single, 302);
}

TEST(MoeRoutingKernel, LargeAndEmptyBatches) {
  KBENCH_REQUIRE_GPU();
  Case large{RoutingMethod::deepseek_v3, 256, 8, 8, 4, true};
  large.tokens = 16384;
  expect_kernel_matches_reference(large, 400);
  Case empty{RoutingMethod::renormalize, 128, 8};
  empty.tokens = 0;
  expect_kernel_matches_reference(empty, 401);
}

TEST(MoeRoutingKernel, RejectsUnsupportedConfigurations) {
  KBENCH_REQUIRE_GPU();
  km::RoutingParams p;
  p.config.method = RoutingMethod::llama4;
  p.config.experts = 8;
  p.config.top_k = 2;
  EXPECT_EQ(km::launch_routing(p, nullptr), cudaErrorInvalidValue);
  p.config.top_k = 1;
  p.logits_dtype = DType::float16;
  EXPECT_EQ(km::launch_routing(p, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kbench
