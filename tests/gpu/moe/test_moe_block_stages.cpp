// The MoE pipeline's block-format stages against their host models (kernels/moe/block_operand.hpp):
// the gather's nvfp4_dequantize (stored codes and scale bytes -> 16-bit operand values),
// nvfp4_quantize (16-bit x -> NVFP4 under the global scale on the device -> operand values) and
// mxfp8_dequantize (MXFP8 codes -> bf16 values), bit for bit, bf16 and fp16, k 1 and 8, an EP
// window with tokens that pick no local expert and no tokens at all; the gated activation's nvfp4
// output (dynamic global scale, FC2's per-expert alpha) and mxfp8 output against the host
// reference, allowing a one-step difference where the host's exp/erf put a value the other side of
// a rounding boundary. Outputs are poisoned.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/moe/gated_activation.hpp"
#include "kernels/moe/block_operand.hpp"
#include "kernels/moe/permutation.hpp"
#include "kernels/moe/permute_quantize.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;
namespace quant = kernels::quant;

constexpr uint16_t kPoison = 0x7f7f;

// Random 16-bit values (bf16 or fp16) and their floats.
std::vector<uint16_t> random_half_bits(std::size_t count, bool fp16, float stddev, std::mt19937& rng,
                                       std::vector<float>& values) {
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<uint16_t> bits(count);
  values.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    bits[i] = km::float_to_half_bits(normal(rng), fp16);
    values[i] = km::half_bits_to_float(bits[i], fp16);
  }
  return bits;
}

// The gather's expected output: each pick's permuted row holds its token's values as 16-bit bits;
// rows no pick lands on keep the poison.
std::vector<uint16_t> expected_permuted_rows(const std::vector<int32_t>& permuted_rows,
                                             const std::vector<float>& token_values, int64_t rows,
                                             int64_t hidden_size, int top_k, bool fp16) {
  std::vector<uint16_t> expected(static_cast<std::size_t>(rows * hidden_size), kPoison);
  for (std::size_t pick = 0; pick < permuted_rows.size(); ++pick) {
    const int32_t row = permuted_rows[pick];
    if (row < 0) continue;
    const std::size_t token = pick / static_cast<std::size_t>(top_k);
    for (int64_t c = 0; c < hidden_size; ++c) {
      expected[static_cast<std::size_t>(row * hidden_size + c)] =
          km::float_to_half_bits(token_values[token * static_cast<std::size_t>(hidden_size) + static_cast<std::size_t>(c)], fp16);
    }
  }
  return expected;
}

// One gather case: `quantize` picks nvfp4_quantize (x 16-bit in the call, global scale g) over
// nvfp4_dequantize (x quantized on the host under g, linear scale bytes).
void expect_nvfp4_gather_matches(bool quantize, bool fp16, int64_t tokens, int top_k, int64_t hidden_size,
                                 int experts, int offset, int local, uint32_t seed) {
  SCOPED_TRACE(std::string(quantize ? "quantize" : "dequantize") + (fp16 ? " fp16" : " bf16") + " T " +
               std::to_string(tokens) + " k " + std::to_string(top_k) + " H " + std::to_string(hidden_size) +
               " local " + std::to_string(offset) + "+" + std::to_string(local) + "/" + std::to_string(experts));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> expert(0, experts - 1);
  std::vector<int32_t> ids(static_cast<std::size_t>(tokens * top_k));
  for (int32_t& id : ids) id = expert(rng);
  const auto index = km::permutation_index_reference(ids, offset, local);
  const int64_t rows = index.row_offsets.back();
  std::vector<float> x;
  const std::vector<uint16_t> x_bits = random_half_bits(static_cast<std::size_t>(tokens * hidden_size), fp16, 2.0f, rng, x);
  float amax = 0.0f;
  for (const float v : x) amax = std::max(amax, std::abs(v));
  const float global = quantize ? 1.0f : km::nvfp4_global_scale(amax);

  // The host's codes and linear scale bytes (nvfp4_dequantize's input), and every token's values.
  std::vector<uint8_t> packed(x.size() / 2, 0), sf(x.size() / km::kNvfp4Block, 0);
  std::vector<float> token_values(x.size());
  for (std::size_t b = 0; b < sf.size(); ++b) {
    const float* block = x.data() + b * km::kNvfp4Block;
    float block_amax = 0.0f;
    for (int i = 0; i < km::kNvfp4Block; ++i) block_amax = std::max(block_amax, std::abs(block[i]));
    const quant::BlockScale s = quant::block_scale(quant::BlockFormat::nvfp4, block_amax, global);
    sf[b] = s.sf;
    for (int i = 0; i < km::kNvfp4Block; ++i) {
      const std::size_t at = b * km::kNvfp4Block + static_cast<std::size_t>(i);
      const uint8_t code = quant::quantize_element(quant::BlockFormat::nvfp4, block[i], s.factor);
      packed[at / 2] |= static_cast<uint8_t>(code << (at % 2 ? 4 : 0));
      token_values[at] = km::nvfp4_operand_value(code, s.sf);
    }
  }
  if (quantize) {  // the host model the case's reference uses gives the same values
    std::vector<float> model(x.size());
    km::block_operand_values(quant::BlockFormat::nvfp4, x.data(), static_cast<int64_t>(x.size()), global, model.data());
    ASSERT_EQ(model, token_values);
  }
  const std::vector<uint16_t> expected =
      expected_permuted_rows(index.permuted_rows, token_values, rows, hidden_size, top_k, fp16);

  CudaStream stream;
  DeviceBuffer hidden_device(std::max<std::size_t>(1, x_bits.size()) * sizeof(uint16_t));
  DeviceBuffer sf_device(std::max<std::size_t>(1, sf.size()));
  DeviceBuffer global_device(sizeof(float));
  DeviceBuffer rows_device(std::max<std::size_t>(1, ids.size()) * sizeof(int32_t));
  DeviceBuffer out_device(static_cast<std::size_t>(std::max<int64_t>(1, rows * hidden_size)) * sizeof(uint16_t));
  if (quantize) {
    testing::to_device(static_cast<char*>(hidden_device.get()), x_bits, stream.get());
  } else {
    testing::to_device(static_cast<char*>(hidden_device.get()), packed, stream.get());
    testing::to_device(static_cast<char*>(sf_device.get()), sf, stream.get());
  }
  testing::to_device(static_cast<char*>(global_device.get()), std::vector<float>{global}, stream.get());
  testing::to_device(static_cast<char*>(rows_device.get()), index.permuted_rows, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(out_device.get(), 0x7f, out_device.bytes(), stream.get()));
  km::PermuteQuantizeParams p;
  p.format = quantize ? km::GatherFormat::nvfp4_quantize : km::GatherFormat::nvfp4_dequantize;
  p.hidden = hidden_device.get();
  p.hidden_dtype = quantize ? (fp16 ? DType::float16 : DType::bfloat16) : DType::uint8;
  p.hidden_sf = sf_device.as<uint8_t>();
  p.out_dtype = fp16 ? DType::float16 : DType::bfloat16;
  p.tensor_scale = global_device.as<float>();
  p.permuted_rows = rows_device.as<int32_t>();
  p.tokens = tokens;
  p.top_k = top_k;
  p.hidden_size = hidden_size;
  p.out = out_device.get();
  ASSERT_EQ(km::launch_permute_quantize(p, stream.get()), cudaSuccess);
  EXPECT_EQ(testing::to_host<uint16_t>(out_device.get(), rows * hidden_size, stream.get()), expected);
}

TEST(MoeNvfp4Gather, MatchesTheHostModelBitForBit) {
  KBENCH_REQUIRE_GPU();
  for (const bool quantize : {false, true}) {
    for (const bool fp16 : {false, true}) {
      expect_nvfp4_gather_matches(quantize, fp16, 1, 1, 128, 8, 0, 8, 1);
      expect_nvfp4_gather_matches(quantize, fp16, 257, 8, 1024, 256, 0, 256, 2);
      expect_nvfp4_gather_matches(quantize, fp16, 301, 8, 384, 256, 96, 32, 3);  // EP: many tokens pick no local expert
      expect_nvfp4_gather_matches(quantize, fp16, 64, 1, 512, 16, 15, 1, 4);
      expect_nvfp4_gather_matches(quantize, fp16, 0, 8, 256, 16, 0, 16, 5);
    }
  }
}

// mxfp8_dequantize: x quantized to MXFP8 on the host (linear ue8m0 scale bytes), gathered as bf16.
void expect_mxfp8_gather_matches(int64_t tokens, int top_k, int64_t hidden_size, int experts, int offset, int local,
                                 uint32_t seed) {
  SCOPED_TRACE("mxfp8 T " + std::to_string(tokens) + " k " + std::to_string(top_k) + " H " +
               std::to_string(hidden_size) + " local " + std::to_string(offset) + "+" + std::to_string(local));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> expert(0, experts - 1);
  std::vector<int32_t> ids(static_cast<std::size_t>(tokens * top_k));
  for (int32_t& id : ids) id = expert(rng);
  const auto index = km::permutation_index_reference(ids, offset, local);
  const int64_t rows = index.row_offsets.back();
  std::vector<float> x;
  (void)random_half_bits(static_cast<std::size_t>(tokens * hidden_size), false, 2.0f, rng, x);
  std::vector<uint8_t> codes(x.size()), sf(x.size() / km::kMxBlock);
  std::vector<float> token_values(x.size());
  for (std::size_t b = 0; b < sf.size(); ++b) {
    const float* block = x.data() + b * km::kMxBlock;
    float block_amax = 0.0f;
    for (int i = 0; i < km::kMxBlock; ++i) block_amax = std::max(block_amax, std::abs(block[i]));
    const quant::BlockScale s = quant::block_scale(quant::BlockFormat::mxfp8, block_amax, 1.0f);
    sf[b] = s.sf;
    for (int i = 0; i < km::kMxBlock; ++i) {
      const std::size_t at = b * km::kMxBlock + static_cast<std::size_t>(i);
      codes[at] = quant::quantize_element(quant::BlockFormat::mxfp8, block[i], s.factor);
      token_values[at] = km::mxfp8_operand_value(codes[at], s.sf);
    }
  }
  const std::vector<uint16_t> expected =
      expected_permuted_rows(index.permuted_rows, token_values, rows, hidden_size, top_k, false);
  CudaStream stream;
  DeviceBuffer hidden_device(std::max<std::size_t>(1, codes.size()));
  DeviceBuffer sf_device(std::max<std::size_t>(1, sf.size()));
  DeviceBuffer rows_device(std::max<std::size_t>(1, ids.size()) * sizeof(int32_t));
  DeviceBuffer out_device(static_cast<std::size_t>(std::max<int64_t>(1, rows * hidden_size)) * sizeof(uint16_t));
  testing::to_device(static_cast<char*>(hidden_device.get()), codes, stream.get());
  testing::to_device(static_cast<char*>(sf_device.get()), sf, stream.get());
  testing::to_device(static_cast<char*>(rows_device.get()), index.permuted_rows, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(out_device.get(), 0x7f, out_device.bytes(), stream.get()));
  km::PermuteQuantizeParams p;
  p.format = km::GatherFormat::mxfp8_dequantize;
  p.hidden = hidden_device.get();
  p.hidden_dtype = DType::uint8;
  p.hidden_sf = sf_device.as<uint8_t>();
  p.out_dtype = DType::bfloat16;
  p.permuted_rows = rows_device.as<int32_t>();
  p.tokens = tokens;
  p.top_k = top_k;
  p.hidden_size = hidden_size;
  p.out = out_device.get();
  ASSERT_EQ(km::launch_permute_quantize(p, stream.get()), cudaSuccess);
  EXPECT_EQ(testing::to_host<uint16_t>(out_device.get(), rows * hidden_size, stream.get()), expected);
}

TEST(MoeMxfp8Gather, MatchesTheHostModelBitForBit) {
  KBENCH_REQUIRE_GPU();
  expect_mxfp8_gather_matches(1, 1, 128, 8, 0, 8, 11);
  expect_mxfp8_gather_matches(257, 8, 1024, 256, 0, 256, 12);
  expect_mxfp8_gather_matches(301, 8, 384, 256, 96, 32, 13);
  expect_mxfp8_gather_matches(0, 8, 256, 16, 0, 16, 14);
}

TEST(MoeNvfp4Gather, RejectsMissingScales) {
  KBENCH_REQUIRE_GPU();
  DeviceBuffer scratch(1024);
  km::PermuteQuantizeParams p;
  p.format = km::GatherFormat::nvfp4_dequantize;
  p.hidden = scratch.get();
  p.hidden_dtype = DType::uint8;
  p.permuted_rows = scratch.as<int32_t>();
  p.out = scratch.get();
  p.tokens = 1;
  p.top_k = 1;
  p.hidden_size = 128;
  EXPECT_EQ(km::launch_permute_quantize(p, nullptr), cudaErrorInvalidValue);  // no hidden_sf
  p.format = km::GatherFormat::nvfp4_quantize;
  p.hidden_dtype = DType::bfloat16;
  EXPECT_EQ(km::launch_permute_quantize(p, nullptr), cudaErrorInvalidValue);  // no global scale
  p.format = km::GatherFormat::mxfp8_dequantize;
  p.hidden_dtype = DType::uint8;
  p.hidden_sf = scratch.as<uint8_t>();
  p.out_dtype = DType::float16;  // MXFP8 values leave fp16's range
  EXPECT_EQ(km::launch_permute_quantize(p, nullptr), cudaErrorInvalidValue);
}

// The activation kernel's 16-bit values `out` of the `count` in use against the host reference's
// `expected`: at least 99% identical, each within its block's largest magnitude / `steps` (a value
// on a rounding boundary, where the host's exp, erf or tanh and the kernel's round apart).
void expect_block_values_match(const std::vector<uint16_t>& out, const std::vector<float>& expected, int64_t count,
                               int block, float steps, bool fp16) {
  int64_t identical = 0;
  for (int64_t b = 0; b < count; b += block) {
    float block_amax = 0.0f;
    for (int64_t i = b; i < b + block; ++i) block_amax = std::max(block_amax, std::abs(expected[static_cast<std::size_t>(i)]));
    for (int64_t i = b; i < b + block; ++i) {
      const float got = km::half_bits_to_float(out[static_cast<std::size_t>(i)], fp16);
      const float want = expected[static_cast<std::size_t>(i)];
      identical += got == want;
      ASSERT_LE(std::abs(got - want), block_amax / steps * 1.01f) << "element " << i << ": " << got << " vs " << want;
    }
  }
  EXPECT_GE(identical, count * 99 / 100);
}

void expect_nvfp4_activation_matches(km::GatedActivation activation, bool fp16, int64_t max_rows, int32_t rows,
                                     int64_t inter, int groups, uint32_t seed) {
  SCOPED_TRACE("activation " + std::to_string(static_cast<int>(activation)) + (fp16 ? " fp16" : " bf16") +
               " rows " + std::to_string(rows) + "/" + std::to_string(max_rows) + " I " + std::to_string(inter));
  std::mt19937 rng(seed);
  std::vector<float> fc1;
  const std::vector<uint16_t> fc1_bits =
      random_half_bits(static_cast<std::size_t>(max_rows * 2 * inter), fp16, 4.0f, rng, fc1);
  std::vector<float> expected = km::gated_activation_values(activation, fc1, rows, inter);
  const float expected_global = km::nvfp4_activation_values(expected);
  std::vector<float> weight_global(static_cast<std::size_t>(groups));
  std::uniform_real_distribution<float> uniform(100.0f, 1000.0f);
  for (float& g : weight_global) g = uniform(rng);

  CudaStream stream;
  DeviceBuffer fc1_device(fc1_bits.size() * sizeof(uint16_t));
  DeviceBuffer count_device(sizeof(int32_t));
  DeviceBuffer out_device(static_cast<std::size_t>(max_rows * inter) * sizeof(uint16_t));
  DeviceBuffer scale_device(sizeof(float)), amax_device(sizeof(float));
  DeviceBuffer weight_global_device(std::max<std::size_t>(1, weight_global.size()) * sizeof(float));
  DeviceBuffer alpha_device(std::max<std::size_t>(1, weight_global.size()) * sizeof(float));
  testing::to_device(static_cast<char*>(fc1_device.get()), fc1_bits, stream.get());
  testing::to_device(static_cast<char*>(count_device.get()), std::vector<int32_t>{rows}, stream.get());
  testing::to_device(static_cast<char*>(weight_global_device.get()), weight_global, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(out_device.get(), 0x7f, out_device.bytes(), stream.get()));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(scale_device.get(), 0xff, scale_device.bytes(), stream.get()));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(alpha_device.get(), 0xff, alpha_device.bytes(), stream.get()));
  km::GatedActivationParams p;
  p.activation = activation;
  p.output = km::ActivationOutput::nvfp4;
  p.fc1 = fc1_device.as<uint16_t>();
  p.fc1_dtype = fp16 ? DType::float16 : DType::bfloat16;
  p.row_count = count_device.as<int32_t>();
  p.max_rows = max_rows;
  p.intermediate = inter;
  p.out = out_device.get();
  p.out_scale = scale_device.as<float>();
  p.amax = amax_device.as<float>();
  p.groups = groups;
  p.weight_global_scales = weight_global_device.as<float>();
  p.group_alpha = alpha_device.as<float>();
  ASSERT_EQ(km::launch_gated_activation(p, stream.get()), cudaSuccess);
  const auto out = testing::to_host<uint16_t>(out_device.get(), max_rows * inter, stream.get());
  for (int64_t i = rows * inter; i < max_rows * inter; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], kPoison) << i;
  if (rows == 0) return;  // nothing in use: the scale and the alphas are not needed
  const float global = testing::to_host<float>(scale_device.get(), 1, stream.get()).at(0);
  EXPECT_NEAR(global, expected_global, expected_global * 1e-6);
  const auto alpha = testing::to_host<float>(alpha_device.get(), groups, stream.get());
  for (int e = 0; e < groups; ++e) {
    EXPECT_EQ(alpha[static_cast<std::size_t>(e)], km::nvfp4_alpha(global, weight_global[static_cast<std::size_t>(e)])) << e;
  }
  // One e2m1 step (at most 2 of 6, a third of the block's largest) where a value lies on a boundary.
  expect_block_values_match(out, expected, rows * inter, km::kNvfp4Block, 3.0f, fp16);
}

TEST(MoeNvfp4Activation, MatchesTheHostReference) {
  KBENCH_REQUIRE_GPU();
  for (const km::GatedActivation activation : {km::GatedActivation::swiglu, km::GatedActivation::geglu,
                                               km::GatedActivation::geglu_tanh, km::GatedActivation::relu2}) {
    for (const bool fp16 : {false, true}) {
      expect_nvfp4_activation_matches(activation, fp16, 1, 1, 128, 1, 1);
      expect_nvfp4_activation_matches(activation, fp16, 300, 217, 256, 40, 2);  // rows past the count untouched
      expect_nvfp4_activation_matches(activation, fp16, 512, 512, 2048, 256, 3);
      expect_nvfp4_activation_matches(activation, fp16, 64, 0, 384, 8, 4);      // no row in use
    }
  }
}

void expect_mxfp8_activation_matches(km::GatedActivation activation, int64_t max_rows, int32_t rows, int64_t inter,
                                     uint32_t seed) {
  SCOPED_TRACE(std::string(activation == km::GatedActivation::swiglu ? "swiglu" : "geglu") + " mxfp8 rows " +
               std::to_string(rows) + "/" + std::to_string(max_rows) + " I " + std::to_string(inter));
  std::mt19937 rng(seed);
  std::vector<float> fc1;
  const std::vector<uint16_t> fc1_bits =
      random_half_bits(static_cast<std::size_t>(max_rows * 2 * inter), false, 4.0f, rng, fc1);
  std::vector<float> expected = km::gated_activation_values(activation, fc1, rows, inter);
  km::block_operand_values(quant::BlockFormat::mxfp8, expected.data(), static_cast<int64_t>(expected.size()), 1.0f,
                           expected.data());

  CudaStream stream;
  DeviceBuffer fc1_device(fc1_bits.size() * sizeof(uint16_t));
  DeviceBuffer count_device(sizeof(int32_t));
  DeviceBuffer out_device(static_cast<std::size_t>(max_rows * inter) * sizeof(uint16_t));
  testing::to_device(static_cast<char*>(fc1_device.get()), fc1_bits, stream.get());
  testing::to_device(static_cast<char*>(count_device.get()), std::vector<int32_t>{rows}, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(out_device.get(), 0x7f, out_device.bytes(), stream.get()));
  km::GatedActivationParams p;
  p.activation = activation;
  p.output = km::ActivationOutput::mxfp8;
  p.fc1 = fc1_device.as<uint16_t>();
  p.row_count = count_device.as<int32_t>();
  p.max_rows = max_rows;
  p.intermediate = inter;
  p.out = out_device.get();
  ASSERT_EQ(km::launch_gated_activation(p, stream.get()), cudaSuccess);
  const auto out = testing::to_host<uint16_t>(out_device.get(), max_rows * inter, stream.get());
  for (int64_t i = rows * inter; i < max_rows * inter; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], kPoison) << i;
  // One e4m3 step (at most 1/8 of the value, so of the block's largest) on a boundary.
  expect_block_values_match(out, expected, rows * inter, km::kMxBlock, 8.0f, false);
}

TEST(MoeMxfp8Activation, MatchesTheHostReference) {
  KBENCH_REQUIRE_GPU();
  for (const km::GatedActivation activation : {km::GatedActivation::swiglu, km::GatedActivation::geglu}) {
    expect_mxfp8_activation_matches(activation, 1, 1, 128, 21);
    expect_mxfp8_activation_matches(activation, 300, 217, 256, 22);
    expect_mxfp8_activation_matches(activation, 512, 512, 2048, 23);
    expect_mxfp8_activation_matches(activation, 64, 0, 384, 24);
  }
}

TEST(MoeNvfp4Activation, RejectsAPartialBlockAndMissingAlphas) {
  KBENCH_REQUIRE_GPU();
  DeviceBuffer scratch(1024);
  km::GatedActivationParams p;
  p.output = km::ActivationOutput::nvfp4;
  p.fc1 = scratch.as<uint16_t>();
  p.row_count = scratch.as<int32_t>();
  p.max_rows = 1;
  p.out = scratch.get();
  p.out_scale = scratch.as<float>();
  p.amax = scratch.as<float>();
  p.intermediate = 64;
  EXPECT_EQ(km::launch_gated_activation(p, nullptr), cudaErrorInvalidValue);
  p.intermediate = 128;
  p.groups = 4;  // without their global scales and alphas
  EXPECT_EQ(km::launch_gated_activation(p, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace kbench
