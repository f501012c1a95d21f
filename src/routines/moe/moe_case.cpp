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
#include "kernels/moe/half_bits.hpp"
#include "kernels/moe/per_tensor_fp8.hpp"
#include "kernels/moe/permutation.hpp"
#include "kernels/moe/permute_quantize.hpp"
#include "kernels/moe/routing_math.hpp"
#include "kernels/quantization/quantize.hpp"
#include "routines/device_tensors.hpp"

namespace kbench {
namespace {

namespace moe = kernels::moe;
namespace quant = kernels::quant;
using kernels::gemm::ScaleMajor;

enum TensorId { kLogits = 0, kBias = 1, kHidden = 2, kW1 = 3, kW2 = 4 };


// The refcheck's tolerances (see MoeCase::compare): rtol (kMoeOutputRelativeTolerance), and atol
// as a fraction of the output's RMS.
constexpr double kRmsTolerance = 0.2;
constexpr double kUnquantizedRmsTolerance = 0.02;
constexpr double kNvfp4RmsTolerance = 0.3;

// The largest magnitude of `count` values of `dtype` on the device, read back.
float device_amax(const void* data, DType dtype, int64_t count, cudaStream_t stream) {
  DeviceBuffer amax(sizeof(float)), scale(sizeof(float));
  moe::PerTensorFp8Params q;
  q.input = data;
  q.dtype = dtype;
  q.count = count;
  q.amax = amax.as<float>();
  q.scale = scale.as<float>();
  KBENCH_CUDA_CHECK(moe::launch_per_tensor_fp8(q, stream));
  return read_as_floats(amax.get(), DType::float32, 1, stream).at(0);
}

}  // namespace

double moe_flops(const MoeProblem& p) {
  const double t = static_cast<double>(p.tokens), h = static_cast<double>(p.hidden);
  const double i = static_cast<double>(p.full_intermediate), w1 = p.gated() ? 2 * i : i;
  return t * static_cast<double>(p.top_k()) * (2 * h * w1 + 2 * i * h);
}

double moe_bytes(const MoeProblem& p, int64_t distinct_experts) {
  const double t = static_cast<double>(p.tokens), h = static_cast<double>(p.hidden);
  const double i = static_cast<double>(p.full_intermediate), e = static_cast<double>(p.experts());
  const double a =
      distinct_experts >= 0 ? static_cast<double>(distinct_experts) : std::min(e, t * static_cast<double>(p.top_k()));
  const double logits = p.routing_in_call ? static_cast<double>(dtype_size(p.logits_dtype)) : 0.0;
  const double out = static_cast<double>(dtype_size(p.input_dtype));
  const double w1 = p.gated() ? 2 * i : i;
  return t * h * p.formula_input_bytes() + t * e * logits + a * (w1 * h + h * i) * p.formula_weight_bytes() +
         t * h * out;
}

std::size_t MoeCase::bytes_per_copy() const {
  const int64_t t = p_.tokens, h = p_.hidden;
  const std::size_t hidden =
      p_.hidden_in_fp8            ? bytes_of(t * h, DType::fp8_e4m3)
      : p_.hidden_block_quantized ? static_cast<std::size_t>(p_.hidden_code_bytes() + t * h / p_.hidden_block())
                                  : bytes_of(t * h, p_.input_dtype);
  const bool nvfp4 = p_.nvfp4_weights();  // its alphas: FC1's (and w4a16's FC2's) per expert
  const int64_t weight_sf = p_.fp4_weights() ? p_.local_experts() * (p_.w1_sf_bytes() + p_.w2_sf_bytes()) : 0;
  return bytes_of(t * p_.experts(), p_.logits_dtype) + bytes_of(p_.experts(), DType::bfloat16) + hidden +
         bytes_of(t * h, p_.input_dtype) /* output */ + bytes_of(p_.picks(), DType::int32) +
         bytes_of(p_.picks(), DType::float32) + p_.weight_bytes(p_.w1_elements() + p_.w2_elements()) +
         static_cast<std::size_t>(weight_sf) +
         bytes_of(p_.w1_scale_count() + p_.w2_scale_count() + 1 + (nvfp4 ? 2 * p_.local_experts() : 0), DType::float32);
}

std::size_t MoeCase::reference_bytes() const {
  // The permuted activation (FP4 weights: fp32 values) and its scales (every pick at most), the fp32
  // activations of every row (the per-tensor scale needs them all before FC2), then one expert at
  // a time (at most every token): its fp32 FC1 or FC2 rows.
  const int64_t rows = p_.picks(), h = p_.hidden, i = p_.intermediate, expert_rows = p_.tokens;
  const DType a = p_.fp4_weights() ? DType::float32 : p_.activation_dtype();
  return bytes_of(rows * h, a) + bytes_of(rows * (h / kMoeScaleBlock), DType::float32) +
         bytes_of(rows * i, DType::float32) * 2 + bytes_of(expert_rows * std::max(p_.w1_rows(), h), DType::float32);
}

std::vector<TensorInfo> MoeCase::tensors() const {
  const int64_t t = p_.tokens, h = p_.hidden, i = p_.intermediate, e = p_.local_experts(), b = kMoeScaleBlock;
  const DType w = p_.weight_dtype();
  std::vector<TensorInfo> out = {{"routing_logits", {t, p_.experts()}, {p_.experts(), 1}, p_.logits_dtype}};
  if (p_.routing_bias) out.push_back({"routing_bias", {p_.experts()}, {1}, DType::bfloat16});
  if (p_.fp4_weights()) {
    // Packed e2m1 pairs with their scale bytes (e4m3 for NVFP4, ue8m0 as uint8 for the MX formats;
    // x's linear, the weights' 128x4-swizzled); x's MXFP8 codes e4m3.
    const bool nvfp4 = p_.nvfp4_weights();
    const DType sf_dtype = nvfp4 ? DType::fp8_e4m3 : DType::uint8;
    if (p_.hidden_block_quantized) {
      const int64_t row = nvfp4 ? h / 2 : h, xb = p_.hidden_block();
      out.push_back({"hidden_states", {t, row}, {row, 1}, nvfp4 ? DType::uint8 : DType::fp8_e4m3});
      out.push_back({"hidden_states_scale", {t, h / xb}, {h / xb, 1}, sf_dtype});
    } else {
      out.push_back({"hidden_states", {t, h}, {h, 1}, p_.input_dtype});
    }
    const int64_t wb = p_.weight_block();
    const int64_t w1 = p_.w1_rows();
    out.push_back({"gemm1_weights", {e, w1, h / 2}, {w1 * h / 2, h / 2, 1}, w});
    out.push_back({"gemm1_weights_scale", {e, w1, h / wb}, {w1 * h / wb, h / wb, 1}, sf_dtype});
    out.push_back({"gemm2_weights", {e, h, i / 2}, {h * i / 2, i / 2, 1}, w});
    out.push_back({"gemm2_weights_scale", {e, h, i / wb}, {h * i / wb, i / wb, 1}, sf_dtype});
    return out;
  }
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
  const float stddev = p_.inputs == MoeInputs::trtllm ? 2.0f : p_.unit_global_scales() ? 0.1f : 1.0f;
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
  if (p_.given) {
    std::vector<uint16_t> bits(p_.given->hidden.size());
    std::transform(p_.given->hidden.begin(), p_.given->hidden.end(), bits.begin(),
                   [fp16 = p_.input_dtype == DType::float16](float x) { return moe::float_to_half_bits(x, fp16); });
    c.hidden = upload(bits, stream);
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // `bits` leaves scope
  } else {
    c.hidden = DeviceBuffer(bytes_of(count, p_.input_dtype));
    KBENCH_CUDA_CHECK(kernels::fill_normal(c.hidden.get(), p_.input_dtype, count, hidden_seed, 0.0f, stddev, stream));
  }
  if (p_.fp4_weights()) {
    // x's NVFP4 global scale, one for the batch: 2688 / amax (trtllm), or 1 (cutlass_fused_moe's
    // activation global scale, whether x is quantized in the call or outside it; cute_dsl's). The
    // MX formats have none (1, unused).
    const float global = p_.format != MoeFormat::nvfp4 || p_.inputs != MoeInputs::trtllm ? 1.0f
                         : p_.hidden_global_scale > 0.0f
                             ? p_.hidden_global_scale
                             : moe::nvfp4_global_scale(device_amax(c.hidden.get(), p_.input_dtype, count, stream));
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(c.hidden_scale.get(), &global, sizeof global, cudaMemcpyHostToDevice, stream));
    DeviceBuffer source;
    if (p_.hidden_block_quantized) {
      source = std::move(c.hidden);
      c.hidden = DeviceBuffer(static_cast<std::size_t>(p_.hidden_code_bytes()));
      c.hidden_sf = DeviceBuffer(static_cast<std::size_t>(count / p_.hidden_block()));
      kernels::QuantizeParams q;
      q.input = source.get();
      q.output = c.hidden.as<uint8_t>();
      q.scales = c.hidden_sf.as<uint8_t>();
      q.rows = p_.tokens;
      q.columns = q.padded_columns = p_.hidden;
      q.block_size = static_cast<int>(p_.hidden_block());
      q.format = p_.hidden_block_format();
      q.layout = quant::SfLayout::linear;  // the gather reads a token's scale bytes in a row
      q.global_scale = global;
      q.in_dtype = p_.input_dtype;
      KBENCH_CUDA_CHECK(kernels::launch_quantize(q, stream));
    }
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // `global` and `source` leave scope
    return;
  }
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
  if (p_.fp4_weights()) {
    build_fp4_weights(c, seed, copy, stream);
    return;
  }
  // Normal weights (moe.md; / 10 for cutlass_fused_moe), in the format's dtype and scales. One
  // expert's fp32 source at a time (all of W1 in fp32 would be 30 GB at DeepSeek-V3's size); each
  // expert's values come from its global id, so an EP window holds the same weights as the full layer.
  const int64_t h = p_.hidden, i = p_.intermediate;
  const float stddev = p_.inputs == MoeInputs::trtllm ? 1.0f : 0.1f;
  const DType w = p_.weight_dtype();
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

void MoeCase::build_fp4_weights(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const {
  // Each expert's W1 and W2 drawn in the input dtype (N(0,1); cutlass_fused_moe's and cute_dsl's
  // / 10) and quantized to NVFP4 under its own global scale 2688 / amax (cute_dsl: 1), or to MXFP4,
  // scale bytes in the 128x4 swizzle, as the reference builds them; NVFP4's FC1 alpha per expert
  // folds in x's global scale (built first). One expert's source at a time; each expert's values
  // come from its global id (as build_weights).
  const bool nvfp4 = p_.nvfp4_weights();
  const int64_t h = p_.hidden, i = p_.intermediate;
  const float stddev = p_.inputs == MoeInputs::trtllm ? 1.0f : 0.1f;
  const float hidden_global = read_as_floats(c.hidden_scale.get(), DType::float32, 1, stream).at(0);
  DeviceBuffer source(bytes_of(std::max(p_.w1_rows() * h, h * i), p_.input_dtype));
  std::vector<float> w1_global, w2_global;
  const struct {
    DeviceBuffer* data;
    DeviceBuffer* sf;
    std::vector<float>* global;
    int64_t rows;
    int64_t k;
    int64_t sf_bytes;
    TensorId id;
  } weights[] = {{&c.w1, &c.w1_sf, &w1_global, p_.w1_rows(), h, p_.w1_sf_bytes(), kW1},
                 {&c.w2, &c.w2_sf, &w2_global, h, i, p_.w2_sf_bytes(), kW2}};
  for (const auto& m : weights) {
    const int64_t elements = m.rows * m.k;
    for (int64_t e = 0; e < p_.local_experts(); ++e) {
      const int64_t global = p_.routing.local_expert_offset + e;
      const uint64_t expert_seed = tensor_seed(tensor_seed(seed, copy, m.id), static_cast<int>(global), 0);
      KBENCH_CUDA_CHECK(kernels::fill_normal(source.get(), p_.input_dtype, elements, expert_seed, 0.0f, stddev, stream));
      m.global->push_back(!nvfp4 || p_.unit_global_scales()
                              ? 1.0f
                              : moe::nvfp4_global_scale(device_amax(source.get(), p_.input_dtype, elements, stream)));
      kernels::QuantizeParams q;
      q.input = source.get();
      q.output = m.data->as<uint8_t>() + e * elements / 2;
      q.scales = m.sf->as<uint8_t>() + e * m.sf_bytes;
      q.rows = m.rows;
      q.columns = q.padded_columns = m.k;
      q.block_size = static_cast<int>(p_.weight_block());
      q.format = p_.weight_block_format();
      q.layout = quant::SfLayout::swizzled_128x4;
      q.global_scale = m.global->back();
      q.in_dtype = p_.input_dtype;
      KBENCH_CUDA_CHECK(kernels::launch_quantize(q, stream));
    }
  }
  // NVFP4's alphas: FC1's folds in x's global scale; w4a16's FC2 reads 16-bit values (scale 1).
  std::vector<float> fc1_alpha, fc2_alpha;
  for (const float g : w1_global) fc1_alpha.push_back(moe::nvfp4_alpha(hidden_global, g));
  for (const float g : w2_global) fc2_alpha.push_back(moe::nvfp4_alpha(1.0f, g));
  const auto bytes = static_cast<std::size_t>(p_.local_experts()) * sizeof(float);
  if (nvfp4) {
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(c.w1_scale.get(), w1_global.data(), bytes, cudaMemcpyHostToDevice, stream));
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(c.w2_scale.get(), w2_global.data(), bytes, cudaMemcpyHostToDevice, stream));
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(c.fc1_alpha.get(), fc1_alpha.data(), bytes, cudaMemcpyHostToDevice, stream));
  }
  if (p_.format == MoeFormat::nvfp4_w4a16) {
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(c.fc2_alpha.get(), fc2_alpha.data(), bytes, cudaMemcpyHostToDevice, stream));
  }
  // `source` and the host vectors are freed on return: the stream must be done with them.
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
    c.w1 = DeviceBuffer(p_.weight_bytes(p_.w1_elements()));
    c.w1_scale = DeviceBuffer(bytes_of(std::max<int64_t>(p_.w1_scale_count(), 1), DType::float32));
    c.w2 = DeviceBuffer(p_.weight_bytes(p_.w2_elements()));
    c.w2_scale = DeviceBuffer(bytes_of(std::max<int64_t>(p_.w2_scale_count(), 1), DType::float32));
    if (p_.fp4_weights()) {
      c.w1_sf = DeviceBuffer(static_cast<std::size_t>(p_.local_experts() * p_.w1_sf_bytes()));
      c.w2_sf = DeviceBuffer(static_cast<std::size_t>(p_.local_experts() * p_.w2_sf_bytes()));
    }
    if (p_.nvfp4_weights()) c.fc1_alpha = DeviceBuffer(bytes_of(p_.local_experts(), DType::float32));
    if (p_.format == MoeFormat::nvfp4_w4a16) c.fc2_alpha = DeviceBuffer(bytes_of(p_.local_experts(), DType::float32));
    build_weights(c, seed, n, stream);
    c.output = DeviceBuffer(bytes_of(t * h, p_.input_dtype));
    c.expert_ids = DeviceBuffer(bytes_of(p_.picks(), DType::int32));
    c.expert_weights = DeviceBuffer(bytes_of(p_.picks(), DType::float32));
    for (const DeviceBuffer* out : {&c.output, &c.expert_ids, &c.expert_weights}) {
      KBENCH_CUDA_CHECK(kernels::poison(out->get(), static_cast<int64_t>(out->bytes()), stream));
    }
    if (p_.given) {  // the picks are inputs
      c.expert_ids = upload(p_.given->expert_ids, stream);
      c.expert_weights = upload(p_.given->weights, stream);
    }
    copies_.push_back(std::move(c));
  }
  // The reference's A of the byte formula: the distinct experts input set 0's tokens pick.
  const moe::RoutingReference routed = route_on_host(stream);
  distinct_experts_ =
      static_cast<int64_t>(std::set<int32_t>(routed.expert_ids.begin(), routed.expert_ids.end()).size());
}

moe::RoutingReference MoeCase::route_on_host(cudaStream_t stream) const {
  if (p_.given) return {p_.given->expert_ids, p_.given->weights, {}};
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
  MoeOperands o;
  o.logits = c.logits.get();
  o.bias = c.bias.get();
  o.hidden = c.hidden.get();
  o.hidden_scale = c.hidden_scale.as<float>();
  o.hidden_sf = c.hidden_sf.as<uint8_t>();
  o.w1 = c.w1.get();
  o.w1_scale = c.w1_scale.as<float>();
  o.w1_sf = c.w1_sf.as<uint8_t>();
  o.w2 = c.w2.get();
  o.w2_scale = c.w2_scale.as<float>();
  o.w2_sf = c.w2_sf.as<uint8_t>();
  o.fc1_alpha = c.fc1_alpha.as<float>();
  o.fc2_alpha = c.fc2_alpha.as<float>();
  o.output = c.output.get();
  o.expert_ids = c.expert_ids.as<int32_t>();
  o.expert_weights = c.expert_weights.as<float>();
  return o;
}

std::vector<CheckedOutput> MoeCase::outputs() const {
  // The routing is checked exactly: the kernel and the host reference share its arithmetic
  // (routing_math.hpp) and its tie rule.
  // Routed outside the call, the picks are inputs: only the output is checked (it fails where they
  // differ from the host routing's).
  const MoeOperands o = operands(0);
  const auto picks = static_cast<std::size_t>(p_.picks());
  std::vector<CheckedOutput> out = {{"output", o.output, p_.input_dtype, static_cast<std::size_t>(p_.tokens * p_.hidden),
                                     Tolerance{kMoeOutputRelativeTolerance, 0.0}}};
  if (p_.routing_in_call) {
    out.push_back({"expert_ids", o.expert_ids, DType::int32, picks, Tolerance{}});
    out.push_back({"expert_weights", o.expert_weights, DType::float32, picks, Tolerance{}});
  }
  return out;
}

std::vector<std::vector<float>> MoeCase::reference(cudaStream_t stream) {
  // The layer in fp32 from input set 0, the pipeline's roundings modelled where they are part of
  // the format: the routing by the host reference; x gathered (and quantized) on the host; each
  // local expert's FC1 and FC2 by the fp32 reference GEMM (dequantized operands, fp32 accumulation,
  // rounded to the input dtype as the pipeline stores them); the activation and its quantization on
  // the host (the per-tensor scale from every row's amax, so all of FC1 first); the weighted sum in
  // pick order on the host. FP4 weights: A (x and the intermediate) in fp32 as the values the
  // format gives (x's as stored, or quantized by the kernels' rule; the intermediate re-quantized by
  // it: NVFP4 under its dynamic global scale, MXFP8, or rounded to bf16), the weights dequantized
  // (NVFP4's with their global scales) by the reference GEMM.
  const int64_t t = p_.tokens, h = p_.hidden, inter = p_.intermediate, top_k = p_.top_k();
  const int64_t h_blocks = h / kMoeScaleBlock;
  const bool fp4 = p_.fp4_weights();
  const DType operand = fp4 ? DType::float32 : p_.activation_dtype();  // A's
  const bool fp16 = p_.input_dtype == DType::float16;
  const MoeOperands o = operands(0);
  const moe::RoutingReference routed = route_on_host(stream);
  const moe::PermutationIndex index =
      moe::permutation_index_reference(routed.expert_ids, p_.routing.local_expert_offset, p_.routing.local_num_experts);
  const int64_t rows = index.row_offsets.back();

  // FC1's A: the gathered rows in the operand dtype, and their 1x128 scales (fp8_block_scale).
  DeviceBuffer a_device, a_scale_device;
  // FP4 weights: the experts' weight global scales (NVFP4's; 1 for MXFP4)
  std::vector<float> w1_global(static_cast<std::size_t>(p_.local_experts()), 1.0f), w2_global = w1_global;
  if (fp4) {
    const std::vector<float> a = gathered_fp32_rows(index, stream);
    a_device = upload(a, stream);
    if (p_.nvfp4_weights()) {
      w1_global = read_as_floats(o.w1_scale, DType::float32, w1_global.size(), stream);
      w2_global = read_as_floats(o.w2_scale, DType::float32, w2_global.size(), stream);
    }
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // before `a` is freed
  } else {
    std::vector<uint8_t> a(static_cast<std::size_t>(rows * h) * dtype_size(operand));
    std::vector<float> a_scale;
    if (p_.format == MoeFormat::fp8_block_scale && p_.given && !p_.given->fp8_codes.empty()) {
      a_scale.resize(static_cast<std::size_t>(rows * h_blocks));
      for (std::size_t pick = 0; pick < index.permuted_rows.size(); ++pick) {
        const int64_t row = index.permuted_rows[pick], token = static_cast<int64_t>(pick) / top_k;
        if (row < 0) continue;
        std::copy_n(p_.given->fp8_codes.begin() + token * h, h, a.begin() + row * h);
        std::copy_n(p_.given->fp8_scales.begin() + token * h_blocks, h_blocks, a_scale.begin() + row * h_blocks);
      }
    } else if (p_.format == MoeFormat::fp8_block_scale) {
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
  DeviceBuffer gemm_out(bytes_of(std::max<int64_t>(largest, 1) * std::max(p_.w1_rows(), h), DType::float32));
  // Expert e's GEMM of m rows: A [m][k] (block scales [m][k/128], or the one tensor scale), B = the
  // expert's [n][k] of `b` with its scales (FP4: scale bytes `b_sf`, global scales `b_global`).
  const auto expert_gemm = [&](int64_t e, int64_t m, int64_t n, int64_t k, const void* a_rows, const float* a_scales,
                               const void* b, const float* b_scales, const uint8_t* b_sf,
                               const std::vector<float>& b_global) {
    kernels::gemm::ReferenceGemmParams r;
    r.m = m;
    r.n = n;
    r.k = k;
    r.a = {a_rows, operand, m * k};
    r.b = {static_cast<const std::byte*>(b) + p_.weight_bytes(e * n * k), p_.weight_dtype(), n * k};
    if (fp4) {
      const quant::SfLayout layout = quant::SfLayout::swizzled_128x4;
      r.b.fp4_scales = b_sf + e * quant::sf_bytes(layout, n, k / p_.weight_block());
      r.b.fp4_format = p_.weight_block_format();
      r.b.sf_layout = layout;
      r.b.sf_columns = k / p_.weight_block();
      r.b.global_scale = b_global.at(static_cast<std::size_t>(e));
    } else if (p_.format == MoeFormat::fp8_block_scale) {
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
        expert_gemm(e, m, p_.w1_rows(), h, static_cast<const std::byte*>(a_device.get()) + bytes_of(first * h, operand),
                    a_scales, o.w1, o.w1_scale, o.w1_sf, w1_global);
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
    case MoeFormat::nvfp4:
    case MoeFormat::mxfp4_mxfp8:
    case MoeFormat::mxfp4_bf16:
    case MoeFormat::nvfp4_w4a16: {
      // The values FC2 reads, in fp32: NVFP4's (the kernel's operand values over the dynamic global
      // scale), MXFP8's, or the 16-bit type's.
      if (p_.format == MoeFormat::nvfp4) {
        const float global = moe::nvfp4_activation_values(activations);
        for (float& v : activations) v = quant::ieee_div(v, global);
      } else if (p_.format == MoeFormat::mxfp4_mxfp8) {
        moe::block_operand_values(quant::BlockFormat::mxfp8, activations.data(), static_cast<int64_t>(activations.size()), 1.0f,
                                   activations.data());
      } else {
        for (float& v : activations) v = moe::half_bits_to_float(moe::float_to_half_bits(v, fp16), fp16);
      }
      act.resize(activations.size() * sizeof(float));
      std::memcpy(act.data(), activations.data(), act.size());
      break;
    }
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
                    a_scales, o.w2, o.w2_scale, o.w2_sf, w2_global);
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
  if (!p_.routing_in_call) return {out};
  return {out, std::vector<float>(routed.expert_ids.begin(), routed.expert_ids.end()), routed.weights};
}

std::vector<float> MoeCase::gathered_fp32_rows(const moe::PermutationIndex& index, cudaStream_t stream) const {
  // x's values as FC1 reads them, in the permutation's row order: NVFP4's (operand value / global
  // scale) from the stored codes and scale bytes, or quantized here from the 16-bit x by the
  // kernels' rule; MXFP8's from its codes; mxfp4_bf16's x as it is.
  const int64_t t = p_.tokens, h = p_.hidden, top_k = p_.top_k();
  const MoeOperands o = operands(0);
  std::vector<float> tokens(static_cast<std::size_t>(t * h));
  if (p_.format == MoeFormat::nvfp4) {
    const float global = read_as_floats(o.hidden_scale, DType::float32, 1, stream).at(0);
    if (p_.hidden_block_quantized) {
      const std::vector<uint8_t> codes = read_bytes(o.hidden, tokens.size() / 2, stream);
      const std::vector<uint8_t> sf = read_bytes(o.hidden_sf, tokens.size() / moe::kNvfp4Block, stream);
      for (std::size_t x = 0; x < tokens.size(); ++x) {
        const uint8_t pair = codes[x / 2];
        tokens[x] = moe::nvfp4_operand_value(x % 2 ? pair >> 4 : pair & 0xF, sf[x / moe::kNvfp4Block]);
      }
    } else {
      const std::vector<float> hidden = read_as_floats(o.hidden, p_.input_dtype, tokens.size(), stream);
      moe::block_operand_values(quant::BlockFormat::nvfp4, hidden.data(), t * h, global, tokens.data());
    }
    for (float& v : tokens) v = quant::ieee_div(v, global);
  } else if (p_.hidden_block_quantized) {  // MXFP8
    const std::vector<uint8_t> codes = read_bytes(o.hidden, tokens.size(), stream);
    const std::vector<uint8_t> sf = read_bytes(o.hidden_sf, tokens.size() / moe::kMxBlock, stream);
    for (std::size_t x = 0; x < tokens.size(); ++x) tokens[x] = moe::mxfp8_operand_value(codes[x], sf[x / moe::kMxBlock]);
  } else {
    tokens = read_as_floats(o.hidden, p_.input_dtype, tokens.size(), stream);
  }
  std::vector<float> rows(static_cast<std::size_t>(index.row_offsets.back() * h));
  for (std::size_t pick = 0; pick < index.permuted_rows.size(); ++pick) {
    const int32_t row = index.permuted_rows[pick];
    if (row < 0) continue;
    std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(pick / static_cast<std::size_t>(top_k)) * h, h,
                rows.begin() + static_cast<std::ptrdiff_t>(row) * h);
  }
  return rows;
}

double moe_output_rms_tolerance(MoeFormat format) {
  switch (format) {
    case MoeFormat::unquantized:
    case MoeFormat::mxfp4_bf16:
    case MoeFormat::nvfp4_w4a16: return kUnquantizedRmsTolerance;
    case MoeFormat::nvfp4: return kNvfp4RmsTolerance;
    case MoeFormat::fp8_block_scale:
    case MoeFormat::fp8_per_tensor:
    case MoeFormat::mxfp4_mxfp8: return kRmsTolerance;
  }
  return kRmsTolerance;
}

Tolerance moe_output_tolerance(double rms_fraction, const std::vector<float>& expected) {
  double sum_sq = 0;
  for (const float v : expected) sum_sq += static_cast<double>(v) * v;
  const double rms = expected.empty() ? 0.0 : std::sqrt(sum_sq / static_cast<double>(expected.size()));
  return {kMoeOutputRelativeTolerance, rms_fraction * rms};
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
  // nvfp4: 0.3 x the RMS. The same flips, on e2m1's coarser grid: x and the weights are read from
  // the same codes by both, so only the intermediate's re-quantization flips (an FC1 value whose
  // bf16 rounding differs, landing the other side of an e2m1 boundary); such a flip is one e2m1
  // step (up to 1/3 of its 16-block's amax, typically 1/12) and moves its token's outputs by about
  // step x |W2| x weight / (sqrt(I) x RMS): estimated below 0.15 RMS at I >= 128 except a top-step
  // flip at top-1, hence the margin. Not yet measured on the H100 (the routine is new); a host
  // emulation of the two summation orders (numpy, trtllm inputs, T 64-300, I 128-1024, k 1 and 8)
  // gave at most 0.021 RMS.
  // mxfp4_mxfp8: 0.2 x the RMS, as the DeepSeek FP8 layer (e4m3 intermediate under power-of-two
  // block scales, 32-blocks instead of 128); mxfp4_bf16: 0.02 x the RMS, as the unquantized layer
  // (x and the weights read exactly by both, the intermediate rounded to bf16 at the same point).
  const std::vector<float>& want = expected.at(0);
  const Tolerance tolerance = moe_output_tolerance(moe_output_rms_tolerance(p_.format), want);
  std::vector<Comparison> comparisons = {compare_isclose("output", want, got.at(0), tolerance)};
  for (std::size_t i = 1; i < outputs.size(); ++i) {
    comparisons.push_back(compare_isclose(outputs[i].name, expected.at(i), got.at(i), outputs[i].tolerance));
  }
  return comparisons;
}

}  // namespace kbench
