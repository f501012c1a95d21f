#include "routines/moe/moe_case.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "core/refcheck.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/moe/combine.hpp"
#include "kernels/moe/per_tensor_fp8.hpp"
#include "kernels/moe/permutation.hpp"
#include "kernels/moe/permute_quantize.hpp"
#include "kernels/moe/routing_math.hpp"
#include "routines/device_tensors.hpp"

namespace kbench {
namespace {

namespace moe = kernels::moe;
using kernels::gemm::ScaleMajor;

enum TensorId { kLogits = 0, kBias = 1, kHidden = 2, kW1 = 3, kW2 = 4 };


// The refcheck's tolerances (see MoeCase::compare): rtol, and atol as a fraction of the output's RMS.
constexpr double kRelativeTolerance = 2e-2;
constexpr double kRmsTolerance = 0.2;
constexpr double kUnquantizedRmsTolerance = 0.02;

}  // namespace

double moe_flops(const MoeProblem& p) {
  const double t = static_cast<double>(p.tokens), h = static_cast<double>(p.hidden);
  const double i = static_cast<double>(p.full_intermediate), w1 = 2 * i;  // gated (Swiglu, Geglu)
  return t * static_cast<double>(p.top_k()) * (2 * h * w1 + 2 * i * h);
}

double moe_bytes(const MoeProblem& p, int64_t distinct_experts) {
  const double t = static_cast<double>(p.tokens), h = static_cast<double>(p.hidden);
  const double i = static_cast<double>(p.full_intermediate), e = static_cast<double>(p.experts());
  const double a =
      distinct_experts >= 0 ? static_cast<double>(distinct_experts) : std::min(e, t * static_cast<double>(p.top_k()));
  const double logits = static_cast<double>(dtype_size(p.logits_dtype));
  const double out = static_cast<double>(dtype_size(p.input_dtype));
  const double element = p.formula_element_bytes();
  return t * h * element + t * e * logits + a * (2 * i * h + h * i) * element + t * h * out;
}

std::size_t MoeCase::bytes_per_copy() const {
  const int64_t t = p_.tokens, h = p_.hidden;
  const std::size_t hidden = p_.hidden_in_fp8 ? bytes_of(t * h, DType::fp8_e4m3) : bytes_of(t * h, p_.input_dtype);
  return bytes_of(t * p_.experts(), p_.logits_dtype) + bytes_of(p_.experts(), DType::bfloat16) + hidden +
         bytes_of(t * h, p_.input_dtype) /* output */ + bytes_of(p_.picks(), DType::int32) +
         bytes_of(p_.picks(), DType::float32) + bytes_of(p_.w1_elements() + p_.w2_elements(), p_.operand_dtype()) +
         bytes_of(p_.w1_scale_count() + p_.w2_scale_count() + 1, DType::float32);
}

std::size_t MoeCase::reference_bytes() const {
  // The permuted activation and its scales (every pick at most), the fp32 activations of every row
  // (the per-tensor scale needs them all before FC2), then one expert at a time (at most every
  // token): its fp32 FC1 or FC2 rows.
  const int64_t rows = p_.picks(), h = p_.hidden, i = p_.intermediate, expert_rows = p_.tokens;
  return bytes_of(rows * h, p_.operand_dtype()) + bytes_of(rows * (h / kMoeScaleBlock), DType::float32) +
         bytes_of(rows * i, DType::float32) * 2 + bytes_of(expert_rows * std::max(2 * i, h), DType::float32);
}

std::vector<TensorInfo> MoeCase::tensors() const {
  const int64_t t = p_.tokens, h = p_.hidden, i = p_.intermediate, e = p_.local_experts(), b = kMoeScaleBlock;
  const DType w = p_.operand_dtype();
  std::vector<TensorInfo> out = {{"routing_logits", {t, p_.experts()}, {p_.experts(), 1}, p_.logits_dtype}};
  if (p_.routing_bias) out.push_back({"routing_bias", {p_.experts()}, {1}, DType::bfloat16});
  out.push_back({"hidden_states", {t, h}, {h, 1}, p_.hidden_in_fp8 ? DType::fp8_e4m3 : p_.input_dtype});
  out.push_back({"gemm1_weights", {e, 2 * i, h}, {2 * i * h, h, 1}, w});
  if (p_.format == MoeFormat::fp8_block_scale) {
    out.push_back({"gemm1_weights_scale", {e, 2 * i / b, h / b}, {2 * i / b * (h / b), h / b, 1}, DType::float32});
  } else if (p_.format == MoeFormat::fp8_per_tensor) {
    out.push_back({"gemm1_weights_scale", {e}, {1}, DType::float32});
  }
  out.push_back({"gemm2_weights", {e, h, i}, {h * i, i, 1}, w});
  if (p_.format == MoeFormat::fp8_block_scale) {
    out.push_back({"gemm2_weights_scale", {e, h / b, i / b}, {h / b * (i / b), i / b, 1}, DType::float32});
  } else if (p_.format == MoeFormat::fp8_per_tensor) {
    out.push_back({"gemm2_weights_scale", {e}, {1}, DType::float32});
  }
  return out;
}

void MoeCase::describe(const Log& log) const {
  for (const auto& [flag, why] : p_.ignored_flags) log.warning("--" + flag + " is ignored: " + why);
}

void MoeCase::build_hidden(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const {
  const int64_t count = p_.tokens * p_.hidden;
  const float stddev = p_.inputs == MoeInputs::trtllm ? 2.0f : 1.0f;
  const uint64_t hidden_seed = tensor_seed(seed, copy, kHidden);
  c.hidden_scale = DeviceBuffer(sizeof(float));
  if (p_.hidden_in_fp8) {
    // The reference casts x to e4m3 outside the call, no scaling: its dequantization scale is 1.
    c.hidden = DeviceBuffer(bytes_of(count, DType::fp8_e4m3));
    KBENCH_CUDA_CHECK(kernels::fill_normal(c.hidden.get(), DType::fp8_e4m3, count, hidden_seed, 0.0f, stddev, stream));
    const float one = 1.0f;
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(c.hidden_scale.get(), &one, sizeof one, cudaMemcpyHostToDevice, stream));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // `one` leaves scope
    return;
  }
  c.hidden = DeviceBuffer(bytes_of(count, p_.input_dtype));
  KBENCH_CUDA_CHECK(kernels::fill_normal(c.hidden.get(), p_.input_dtype, count, hidden_seed, 0.0f, stddev, stream));
  if (p_.format == MoeFormat::fp8_per_tensor) {
    // cutlass_fused_moe fp8: x's static scale, amax / 448, calibrated here; x is quantized in the call.
    DeviceBuffer amax(sizeof(float));
    kernels::moe::PerTensorFp8Params q;
    q.input = c.hidden.get();
    q.dtype = p_.input_dtype;
    q.count = count;
    q.amax = amax.as<float>();
    q.scale = c.hidden_scale.as<float>();
    KBENCH_CUDA_CHECK(kernels::moe::launch_per_tensor_fp8(q, stream));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // `amax` is freed on return
  }
}

void MoeCase::build_weights(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const {
  // Normal weights (moe.md; / 10 for cutlass_fused_moe), in the format's dtype and scales. One
  // expert's fp32 source at a time (all of W1 in fp32 would be 30 GB at DeepSeek-V3's size); each
  // expert's values come from its global id, so an EP window holds the same weights as the full layer.
  const int64_t h = p_.hidden, i = p_.intermediate;
  const float stddev = p_.inputs == MoeInputs::trtllm ? 1.0f : 0.1f;
  const DType w = p_.operand_dtype();
  DeviceBuffer source(bytes_of(2 * i * h, DType::float32));
  DeviceBuffer amax(sizeof(float));
  const struct {
    DeviceBuffer* data;
    DeviceBuffer* scale;
    int64_t rows;
    int64_t k;
    TensorId id;
  } weights[] = {{&c.w1, &c.w1_scale, 2 * i, h, kW1}, {&c.w2, &c.w2_scale, h, i, kW2}};
  for (const auto& m : weights) {
    const int64_t elements = m.rows * m.k;
    const int64_t block_scales = (m.rows / kMoeScaleBlock) * (m.k / kMoeScaleBlock);
    for (int64_t e = 0; e < p_.local_experts(); ++e) {
      const int64_t global = p_.routing.local_expert_offset + e;
      const uint64_t expert_seed = tensor_seed(tensor_seed(seed, copy, m.id), static_cast<int>(global), 0);
      std::byte* expert = static_cast<std::byte*>(m.data->get()) + bytes_of(e * elements, w);
      if (p_.format == MoeFormat::unquantized ||
          (p_.format == MoeFormat::fp8_per_tensor && p_.inputs == MoeInputs::trtllm)) {
        // Drawn in the weights' dtype: the reference's straight cast (trtllm per-tensor: scale 1).
        KBENCH_CUDA_CHECK(kernels::fill_normal(expert, w, elements, expert_seed, 0.0f, stddev, stream));
        continue;
      }
      KBENCH_CUDA_CHECK(kernels::fill_normal(source.get(), DType::float32, elements, expert_seed, 0.0f, stddev, stream));
      if (p_.format == MoeFormat::fp8_per_tensor) {
        kernels::moe::PerTensorFp8Params q;  // cutlass_fused_moe fp8: scale amax / 448 per expert
        q.input = source.get();
        q.dtype = DType::float32;
        q.count = elements;
        q.amax = amax.as<float>();
        q.scale = m.scale->as<float>() + e;
        q.output = reinterpret_cast<uint8_t*>(expert);
        KBENCH_CUDA_CHECK(kernels::moe::launch_per_tensor_fp8(q, stream));
        continue;
      }
      kernels::gemm::GroupwiseQuantizeParams q;
      q.input = source.as<float>();
      q.output = reinterpret_cast<uint8_t*>(expert);
      q.scales = m.scale->as<float>() + e * block_scales;
      q.groups = 1;
      q.rows = m.rows;
      q.k = m.k;
      q.tile = kMoeScaleBlock;
      q.block_rows = kMoeScaleBlock;
      q.major = ScaleMajor::k;
      KBENCH_CUDA_CHECK(kernels::gemm::quantize_groupwise(q, stream));
    }
  }
  if (p_.format == MoeFormat::fp8_per_tensor && p_.inputs == MoeInputs::trtllm) {
    // The reference's output1/output2 scale scalars: 1 per expert.
    const std::vector<float> ones(static_cast<std::size_t>(p_.local_experts()), 1.0f);
    for (DeviceBuffer* scale : {&c.w1_scale, &c.w2_scale}) {
      KBENCH_CUDA_CHECK(cudaMemcpyAsync(scale->get(), ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice,
                                        stream));
    }
  }
  // `source`, `amax` and `ones` are freed on return: the stream must be done with them.
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void MoeCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  const int64_t t = p_.tokens, h = p_.hidden;
  copies_.clear();
  for (int n = 0; n < copies; ++n) {
    Copy c;
    c.logits = DeviceBuffer(bytes_of(t * p_.experts(), p_.logits_dtype));
    KBENCH_CUDA_CHECK(kernels::fill_normal(c.logits.get(), p_.logits_dtype, t * p_.experts(),
                                           tensor_seed(seed, n, kLogits), 0.0f, 1.0f, stream));
    if (p_.routing_bias) {
      // The reference's bias: the constant 0.1 (bf16) for every expert.
      c.bias = DeviceBuffer(bytes_of(p_.experts(), DType::bfloat16));
      KBENCH_CUDA_CHECK(kernels::fill_normal(c.bias.get(), DType::bfloat16, p_.experts(), tensor_seed(seed, n, kBias),
                                             0.1f, 0.0f, stream));
    }
    build_hidden(c, seed, n, stream);
    c.w1 = DeviceBuffer(bytes_of(p_.w1_elements(), p_.operand_dtype()));
    c.w1_scale = DeviceBuffer(bytes_of(std::max<int64_t>(p_.w1_scale_count(), 1), DType::float32));
    c.w2 = DeviceBuffer(bytes_of(p_.w2_elements(), p_.operand_dtype()));
    c.w2_scale = DeviceBuffer(bytes_of(std::max<int64_t>(p_.w2_scale_count(), 1), DType::float32));
    build_weights(c, seed, n, stream);
    c.output = DeviceBuffer(bytes_of(t * h, p_.input_dtype));
    c.expert_ids = DeviceBuffer(bytes_of(p_.picks(), DType::int32));
    c.expert_weights = DeviceBuffer(bytes_of(p_.picks(), DType::float32));
    for (const DeviceBuffer* out : {&c.output, &c.expert_ids, &c.expert_weights}) {
      KBENCH_CUDA_CHECK(kernels::poison(out->get(), static_cast<int64_t>(out->bytes()), stream));
    }
    copies_.push_back(std::move(c));
  }
  // The reference's A of the byte formula: the distinct experts input set 0's tokens pick.
  const moe::RoutingReference routed = route_on_host(stream);
  distinct_experts_ =
      static_cast<int64_t>(std::set<int32_t>(routed.expert_ids.begin(), routed.expert_ids.end()).size());
}

moe::RoutingReference MoeCase::route_on_host(cudaStream_t stream) const {
  const Copy& c = copies_.front();
  const std::vector<float> logits =
      read_as_floats(c.logits.get(), p_.logits_dtype, static_cast<std::size_t>(p_.tokens * p_.experts()), stream);
  std::vector<float> bias;
  if (p_.routing_bias) {
    bias = read_as_floats(c.bias.get(), DType::bfloat16, static_cast<std::size_t>(p_.experts()), stream);
  }
  return moe::route_reference(p_.routing, logits, p_.routing_bias ? &bias : nullptr);
}

MoeOperands MoeCase::operands(int copy) const {
  const Copy& c = copies_.at(static_cast<std::size_t>(copy));
  return {c.logits.get(),
          c.bias.get(),
          c.hidden.get(),
          c.hidden_scale.as<float>(),
          c.w1.get(),
          c.w1_scale.as<float>(),
          c.w2.get(),
          c.w2_scale.as<float>(),
          c.output.get(),
          c.expert_ids.as<int32_t>(),
          c.expert_weights.as<float>()};
}

std::vector<CheckedOutput> MoeCase::outputs() const {
  // The routing is checked exactly: the kernel and the host reference share its arithmetic
  // (routing_math.hpp) and its tie rule.
  const MoeOperands o = operands(0);
  const auto picks = static_cast<std::size_t>(p_.picks());
  return {{"output", o.output, p_.input_dtype, static_cast<std::size_t>(p_.tokens * p_.hidden),
           Tolerance{kRelativeTolerance, 0.0}},
          {"expert_ids", o.expert_ids, DType::int32, picks, Tolerance{}},
          {"expert_weights", o.expert_weights, DType::float32, picks, Tolerance{}}};
}

std::vector<std::vector<float>> MoeCase::reference(cudaStream_t stream) {
  // The layer in fp32 from input set 0, the pipeline's roundings modelled where they are part of
  // the format: the routing by the host reference; x gathered (and quantized) on the host; each
  // local expert's FC1 and FC2 by the fp32 reference GEMM (dequantized operands, fp32 accumulation,
  // rounded to the input dtype as the pipeline stores them); the activation and its quantization on
  // the host (the per-tensor scale from every row's amax, so all of FC1 first); the weighted sum in
  // pick order on the host.
  const int64_t t = p_.tokens, h = p_.hidden, inter = p_.intermediate, top_k = p_.top_k();
  const int64_t h_blocks = h / kMoeScaleBlock;
  const DType operand = p_.operand_dtype();
  const bool fp16 = p_.input_dtype == DType::float16;
  const MoeOperands o = operands(0);
  const moe::RoutingReference routed = route_on_host(stream);
  const moe::PermutationIndex index =
      moe::permutation_index_reference(routed.expert_ids, p_.routing.local_expert_offset, p_.routing.local_num_experts);
  const int64_t rows = index.row_offsets.back();

  // FC1's A: the gathered rows in the operand dtype, and their 1x128 scales (fp8_block_scale).
  DeviceBuffer a_device, a_scale_device;
  {
    std::vector<uint8_t> a(static_cast<std::size_t>(rows * h) * dtype_size(operand));
    std::vector<float> a_scale;
    if (p_.format == MoeFormat::fp8_block_scale) {
      const std::vector<float> hidden = read_as_floats(o.hidden, p_.input_dtype, static_cast<std::size_t>(t * h), stream);
      a_scale.resize(static_cast<std::size_t>(rows * h_blocks));
      moe::permute_quantize_reference(hidden, index.permuted_rows, t, static_cast<int>(top_k), h, a, a_scale);
    } else {
      const DType stored = p_.hidden_in_fp8 ? DType::fp8_e4m3 : p_.input_dtype;
      std::vector<uint8_t> hidden(static_cast<std::size_t>(t * h) * dtype_size(stored));
      KBENCH_CUDA_CHECK(cudaMemcpyAsync(hidden.data(), o.hidden, hidden.size(), cudaMemcpyDeviceToHost, stream));
      float hidden_scale = 1.0f;
      KBENCH_CUDA_CHECK(cudaMemcpyAsync(&hidden_scale, o.hidden_scale, sizeof hidden_scale, cudaMemcpyDeviceToHost, stream));
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      const bool quantize = p_.format == MoeFormat::fp8_per_tensor && !p_.hidden_in_fp8;
      moe::permute_rows_reference(quantize ? moe::GatherFormat::fp8_per_tensor : moe::GatherFormat::copy, hidden,
                                  static_cast<int>(dtype_size(stored)), fp16, hidden_scale, index.permuted_rows, t,
                                  static_cast<int>(top_k), h, a);
    }
    a_device = upload(a, stream);
    if (!a_scale.empty()) a_scale_device = upload(a_scale, stream);
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the host copies are freed
  }

  int64_t largest = 0;
  for (std::size_t e = 0; e + 1 < index.row_offsets.size(); ++e) {
    largest = std::max<int64_t>(largest, index.row_offsets[e + 1] - index.row_offsets[e]);
  }
  DeviceBuffer gemm_out(bytes_of(std::max<int64_t>(largest, 1) * std::max(2 * inter, h), DType::float32));
  // Expert e's GEMM of m rows: A [m][k] (block scales [m][k/128], or the one tensor scale), B = the
  // expert's [n][k] of `b` with its scales.
  const auto expert_gemm = [&](int64_t e, int64_t m, int64_t n, int64_t k, const void* a_rows, const float* a_scales,
                               const void* b, const float* b_scales) {
    kernels::gemm::ReferenceGemmParams r;
    r.m = m;
    r.n = n;
    r.k = k;
    r.a = {a_rows, operand, m * k};
    r.b = {static_cast<const std::byte*>(b) + bytes_of(e * n * k, operand), operand, n * k};
    if (p_.format == MoeFormat::fp8_block_scale) {
      r.a.block_scales = a_scales;
      r.a.block_rows = 1;
      r.a.scale_block_rows = m;
      r.b.block_scales = b_scales + e * (n / kMoeScaleBlock) * (k / kMoeScaleBlock);
      r.b.block_rows = kMoeScaleBlock;
      r.b.scale_block_rows = n / kMoeScaleBlock;
    } else if (p_.format == MoeFormat::fp8_per_tensor) {
      r.a.tensor_scale = a_scales;
      r.b.tensor_scale = b_scales + e;
    }
    r.tile = kMoeScaleBlock;
    r.major = ScaleMajor::k;
    r.out_dtype = p_.input_dtype;
    r.out = gemm_out.as<float>();
    KBENCH_CUDA_CHECK(kernels::gemm::reference_gemm(r, stream));
    return read_as_floats(gemm_out.get(), DType::float32, static_cast<std::size_t>(m * n), stream);
  };

  // FC1 and the activation of every row, in fp32 (Llama 4's routing scales multiply x: FC1's rows).
  std::vector<float> row_weights;
  if (p_.routing_scales_on_input) {
    row_weights.assign(static_cast<std::size_t>(rows), 0.0f);
    for (std::size_t pick = 0; pick < index.permuted_rows.size(); ++pick) {
      if (index.permuted_rows[pick] >= 0) row_weights[static_cast<std::size_t>(index.permuted_rows[pick])] = routed.weights[pick];
    }
  }
  std::vector<float> activations(static_cast<std::size_t>(rows * inter));
  for (int64_t e = 0; e < p_.local_experts(); ++e) {
    const int64_t first = index.row_offsets[static_cast<std::size_t>(e)];
    const int64_t m = index.row_offsets[static_cast<std::size_t>(e) + 1] - first;
    if (m == 0) continue;
    const float* a_scales = p_.format == MoeFormat::fp8_block_scale ? a_scale_device.as<float>() + first * h_blocks
                                                                    : o.hidden_scale;
    const std::vector<float> fc1 =
        expert_gemm(e, m, 2 * inter, h, static_cast<const std::byte*>(a_device.get()) + bytes_of(first * h, operand),
                    a_scales, o.w1, o.w1_scale);
    std::vector<float> weights;
    if (!row_weights.empty()) weights.assign(row_weights.begin() + first, row_weights.begin() + first + m);
    const std::vector<float> a = moe::gated_activation_values(p_.activation, fc1, m, inter, weights.empty() ? nullptr : &weights);
    std::copy(a.begin(), a.end(), activations.begin() + first * inter);
  }

  // The intermediate in FC2's format.
  std::vector<uint8_t> act;
  std::vector<float> act_scale;
  switch (p_.format) {
    case MoeFormat::fp8_block_scale:
      moe::quantize_activation_blocks(activations, rows, inter, act, act_scale);
      break;
    case MoeFormat::fp8_per_tensor: {
      float amax = 0.0f;
      for (const float v : activations) amax = std::max(amax, std::abs(v));
      act_scale = {kernels::gemm::groupwise_scale(amax)};
      act.resize(activations.size());
      for (std::size_t x = 0; x < act.size(); ++x) act[x] = kernels::gemm::groupwise_quantize(activations[x], act_scale[0]);
      break;
    }
    case MoeFormat::nvfp4: throw std::logic_error("no backend runs the nvfp4 MoE: it has no reference yet");
    case MoeFormat::unquantized:
      act.resize(activations.size() * 2);
      for (std::size_t x = 0; x < activations.size(); ++x) {
        const uint16_t bits = moe::float_to_half_bits(activations[x], fp16);
        std::memcpy(act.data() + 2 * x, &bits, 2);
      }
      break;
  }
  activations = {};
  const DeviceBuffer act_device = upload(act, stream);
  const DeviceBuffer act_scale_device = act_scale.empty() ? DeviceBuffer() : upload(act_scale, stream);
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  act = {};

  std::vector<uint16_t> expert_rows(static_cast<std::size_t>(rows * h));  // FC2's rows, in the input dtype
  for (int64_t e = 0; e < p_.local_experts(); ++e) {
    const int64_t first = index.row_offsets[static_cast<std::size_t>(e)];
    const int64_t m = index.row_offsets[static_cast<std::size_t>(e) + 1] - first;
    if (m == 0) continue;
    const int64_t i_blocks = inter / kMoeScaleBlock;
    const float* a_scales = p_.format == MoeFormat::fp8_block_scale ? act_scale_device.as<float>() + first * i_blocks
                                                                    : act_scale_device.as<float>();
    const std::vector<float> fc2 =
        expert_gemm(e, m, h, inter, static_cast<const std::byte*>(act_device.get()) + bytes_of(first * inter, operand),
                    a_scales, o.w2, o.w2_scale);
    for (std::size_t x = 0; x < fc2.size(); ++x) {
      expert_rows[static_cast<std::size_t>(first * h) + x] = moe::float_to_half_bits(fc2[x], fp16);
    }
  }
  const std::vector<uint16_t> combined =
      moe::combine_reference(expert_rows, index.permuted_rows, p_.routing_scales_on_input ? std::vector<float>() : routed.weights,
                             t, static_cast<int>(top_k), h, fp16);
  std::vector<float> out(combined.size());
  std::transform(combined.begin(), combined.end(), out.begin(),
                 [fp16](uint16_t bits) { return moe::half_bits_to_float(bits, fp16); });
  return {out, std::vector<float>(routed.expert_ids.begin(), routed.expert_ids.end()), routed.weights};
}

std::vector<Comparison> MoeCase::compare(const std::vector<CheckedOutput>& outputs,
                                         const std::vector<std::vector<float>>& expected,
                                         const std::vector<std::vector<float>>& got) const {
  // isclose with rtol 2e-2 and atol 0.2 x the output's RMS for the FP8 formats (0.02 x unquantized,
  // where only the sums' order differs: FC1 and the intermediate round to 16 bits at the same
  // points). The FP8 pipeline and this reference round
  // at the same points (x and the intermediate to e4m3 in 1x128 blocks, FC1 and FC2 to bf16) but
  // sum in different orders, so values on a rounding boundary round the other way: each
  // intermediate code one e4m3 step off (up to 1/8 of it) moves all H outputs of its token by one
  // FC2 term's share, and a token collects such flips over its I x k codes. Measured on the H100
  // (session 18, every MoeEndToEnd line and bench/moe/deepseek_v3.txt, I 128 to 2048): the largest
  // difference was 0.03-0.124 of the RMS, 0.061 at 16384 tokens of DeepSeek-V3 (2e-2 x RMS failed
  // 0.02-0.66% of the elements). A wrong expert, weight or block scale, or a lost pick (1/k of a
  // token's output: 0.35 RMS at k = 8), moves outputs by more. The atol is relative to the RMS
  // because an output summing k picks may cancel to near zero, and the outputs reach 1e6.
  const std::vector<float>& want = expected.at(0);
  double sum_sq = 0;
  for (const float v : want) sum_sq += static_cast<double>(v) * v;
  const double rms = want.empty() ? 0.0 : std::sqrt(sum_sq / static_cast<double>(want.size()));
  const double rms_fraction = p_.format == MoeFormat::unquantized ? kUnquantizedRmsTolerance : kRmsTolerance;
  const Tolerance tolerance{outputs.at(0).tolerance.rtol, rms_fraction * rms};
  std::vector<Comparison> comparisons = {compare_isclose("output", want, got.at(0), tolerance)};
  for (std::size_t i = 1; i < outputs.size(); ++i) {
    comparisons.push_back(compare_isclose(outputs[i].name, expected.at(i), got.at(i), outputs[i].tolerance));
  }
  return comparisons;
}

}  // namespace kbench
