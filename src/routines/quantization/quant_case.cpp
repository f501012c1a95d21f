#include "routines/quantization/quant_case.hpp"

#include <stdexcept>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/device_tensors.hpp"
#include "routines/quantization/quant_reference.hpp"

namespace kbench {
namespace {

enum TensorId { kInput = 0 };

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

}  // namespace

kernels::QuantizeParams QuantProblem::shape() const {
  kernels::QuantizeParams s;
  s.batches = batch_size;
  s.rows = m;
  s.columns = k;
  s.padded_columns = variant == QuantVariant::mxfp8 ? (k + alignment - 1) / alignment * alignment : k;
  s.block_size = sf_vec_size;
  s.format = variant == QuantVariant::mxfp8   ? kernels::quant::BlockFormat::mxfp8
             : variant == QuantVariant::mxfp4 ? kernels::quant::BlockFormat::mxfp4
                                              : kernels::quant::BlockFormat::nvfp4;
  s.layout = layout;
  s.shuffle_rows = do_shuffle;
  s.global_scale = global_scale;
  s.in_dtype = input_dtype;
  s.enable_pdl = enable_pdl;
  return s;
}

double quant_flops(const QuantProblem& p) { return 3.0 * static_cast<double>(p.elements()); }

double quant_bytes(const QuantProblem& p) {
  const double n = static_cast<double>(p.elements());
  const double input = n * static_cast<double>(dtype_size(p.input_dtype));
  switch (p.variant) {
    case QuantVariant::mxfp8: return input + n + n / static_cast<double>(p.alignment);
    case QuantVariant::mxfp4: return input + n / 2 + n / 32;
    case QuantVariant::nvfp4:
    case QuantVariant::nvfp4_batched:
      return input + 4 + n / 2 + n / p.sf_vec_size + (p.per_token ? 4.0 * static_cast<double>(p.m) : 0.0);
  }
  throw std::logic_error("unknown quantization variant");
}

std::size_t QuantCase::bytes_per_copy() const {
  const kernels::QuantizeParams s = p_.shape();
  return static_cast<std::size_t>(p_.elements()) * dtype_size(p_.input_dtype) +
         static_cast<std::size_t>(s.batches * s.rows * s.output_row_bytes() + s.batches * s.scale_bytes_per_batch()) +
         (p_.per_token ? static_cast<std::size_t>(p_.m) * sizeof(float) : 0);
}

std::vector<TensorInfo> QuantCase::tensors() const {
  const kernels::QuantizeParams s = p_.shape();
  const bool batched = p_.variant == QuantVariant::nvfp4_batched;
  auto shape = [&](int64_t columns) {
    return batched ? std::vector<int64_t>{p_.batch_size, p_.m, columns} : std::vector<int64_t>{p_.m, columns};
  };
  auto stride = [&](int64_t columns) {
    return batched ? std::vector<int64_t>{p_.m * columns, columns, 1} : std::vector<int64_t>{columns, 1};
  };
  std::vector<TensorInfo> t = {{"input", shape(p_.k), stride(p_.k), p_.input_dtype},
                               {"quantized", shape(s.output_row_bytes()), stride(s.output_row_bytes()), DType::uint8}};
  const int64_t scale_bytes = s.scale_bytes_per_batch();
  t.push_back(batched ? TensorInfo{"scale_factors", {p_.batch_size, scale_bytes}, {scale_bytes, 1}, DType::uint8}
                      : TensorInfo{"scale_factors", {scale_bytes}, {1}, DType::uint8});
  if (p_.per_token) t.push_back({"token_scales", {p_.m}, {1}, DType::float32});
  return t;
}

void QuantCase::describe(const Log& log) const {
  for (const auto& flag : p_.ignored_flags) log.warning("--" + flag + " does not apply to this routine and is ignored");
  const char* layout = p_.layout == kernels::quant::SfLayout::linear           ? "linear"
                       : p_.layout == kernels::quant::SfLayout::swizzled_128x4 ? "128x4"
                                                                                : "8x4";
  log.vverbose(std::string("sf_layout = ") + layout + ", sf_vec_size = " + std::to_string(p_.sf_vec_size));
  if (p_.variant == QuantVariant::nvfp4 || p_.variant == QuantVariant::nvfp4_batched) {
    log.vverbose(p_.per_token ? std::string("global_scale = per token (448 * 6 / row amax)")
                              : "global_scale = " + python_float(p_.global_scale));
  }
}

void QuantCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  const kernels::QuantizeParams s = p_.shape();
  copies_.clear();
  for (int i = 0; i < copies; ++i) {
    Copy c;
    c.input = DeviceBuffer(static_cast<std::size_t>(p_.elements()) * dtype_size(p_.input_dtype));
    c.output = DeviceBuffer(static_cast<std::size_t>(s.batches * s.rows * s.output_row_bytes()));
    c.scales = DeviceBuffer(static_cast<std::size_t>(s.batches * s.scale_bytes_per_batch()));
    if (p_.per_token) c.token_scales = DeviceBuffer(static_cast<std::size_t>(p_.m) * sizeof(float));
    KBENCH_CUDA_CHECK(kernels::fill_normal(c.input.get(), p_.input_dtype, p_.elements(), tensor_seed(seed, i, kInput),
                                           0.0f, 1.0f, stream));
    for (DeviceBuffer* out : {&c.output, &c.scales, &c.token_scales}) {
      KBENCH_CUDA_CHECK(kernels::poison(out->get(), static_cast<int64_t>(out->bytes()), stream));
    }
    copies_.push_back(std::move(c));
  }
}

kernels::QuantizeParams QuantCase::params(int copy_index) const {
  const Copy& c = copies_.at(static_cast<std::size_t>(copy_index));
  kernels::QuantizeParams k = p_.shape();
  k.input = c.input.get();
  k.output = c.output.as<uint8_t>();
  k.scales = c.scales.as<uint8_t>();
  k.token_scales = p_.per_token ? c.token_scales.as<float>() : nullptr;
  return k;
}

std::vector<CheckedOutput> QuantCase::outputs() const {
  // Bytes compared exactly (uint8, tolerance 0): the kernels follow the host reference's rules.
  const kernels::QuantizeParams k = params(0);
  std::vector<CheckedOutput> out = {
      {"quantized", k.output, DType::uint8, static_cast<std::size_t>(k.batches * k.rows * k.output_row_bytes()), {0, 0}},
      {"scale_factors", k.scales, DType::uint8, static_cast<std::size_t>(k.batches * k.scale_bytes_per_batch()), {0, 0}}};
  if (p_.per_token) out.push_back({"token_scales", k.token_scales, DType::float32, static_cast<std::size_t>(p_.m), {0, 0}});
  return out;
}

std::vector<std::vector<float>> QuantCase::reference(cudaStream_t stream) {
  const kernels::QuantizeParams k = params(0);
  const std::vector<float> input =
      read_as_floats(k.input, p_.input_dtype, static_cast<std::size_t>(p_.elements()), stream);
  const quant_reference::Quantized expected = quant_reference::quantize(input, k);
  std::vector<std::vector<float>> result = {as_floats(expected.data), as_floats(expected.scales)};
  if (p_.per_token) result.push_back(expected.token_scales);
  return result;
}

}  // namespace kbench
