#include "routines/norm/norm_case.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "routines/device_tensors.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/quantization/quant_reference.hpp"

namespace kbench {
namespace {

enum TensorId { kInput = 0, kResidual = 1, kWeight = 2, kBeta = 3 };

using kernels::quant::BlockFormat;
using kernels::quant::SfLayout;

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

// fused_rmsnorm_silu's weight, as the reference draws it: uniform in [0.5, 2). The values
// 0.5 + j / 128 are exact in bfloat16 and float16, so they are made on the host as raw bits.
std::vector<uint16_t> uniform_weight_bits(int64_t hidden, DType dtype, uint64_t seed) {
  std::vector<uint16_t> bits(static_cast<std::size_t>(hidden));
  uint64_t state = seed;
  for (auto& b : bits) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const float v = 0.5f + static_cast<float>((state >> 33) % 192) / 128.0f;
    uint32_t f;
    std::memcpy(&f, &v, sizeof f);
    b = dtype == DType::bfloat16 ? static_cast<uint16_t>(f >> 16)
                                 : static_cast<uint16_t>((((f >> 23) - 127 + 15) << 10) | ((f >> 13) & 0x3FF));
  }
  return bits;
}

}  // namespace

std::vector<SfLayout> NormProblem::sf_layouts() const {
  if (!fp4()) return {};
  if (both_sf_layouts) return {SfLayout::linear, SfLayout::swizzled_128x4};
  return {sf_swizzled ? SfLayout::swizzled_128x4 : SfLayout::linear};
}

kernels::QuantizeParams NormProblem::fp4_shape(SfLayout layout) const {
  kernels::QuantizeParams s;
  s.rows = rows();
  s.columns = s.padded_columns = hidden_size;
  s.block_size = static_cast<int>(fp4_block());
  s.format = fp4_format;
  s.layout = layout;
  s.global_scale = 1.0f;
  s.in_dtype = input_dtype;
  return s;
}

double norm_flops(const NormProblem& p) {
  const double n = static_cast<double>(p.elements());
  return (p.fused_add() ? 6.0 : 5.0) * n;
}

double norm_bytes(const NormProblem& p) {
  const double n = static_cast<double>(p.elements());
  const double b_in = static_cast<double>(dtype_size(p.input_dtype));
  const double b_out = static_cast<double>(dtype_size(p.out_dtype));
  const double weight = static_cast<double>(p.hidden_size) * b_in;
  const double scales = n / static_cast<double>(p.fp4_block());
  switch (p.variant) {
    case NormVariant::rmsnorm:
    case NormVariant::gemma_rmsnorm:
    case NormVariant::fused_rmsnorm_silu: return 2 * n * b_in + weight;
    case NormVariant::fused_add_rmsnorm:
    case NormVariant::gemma_fused_add_rmsnorm: return 4 * n * b_in + weight;
    case NormVariant::rmsnorm_quant: return n * b_in + weight + n * b_out;
    case NormVariant::fused_add_rmsnorm_quant: return 3 * n * b_in + weight + n * b_out;
    // fp32 gamma and beta.
    case NormVariant::layernorm_quant: return n * b_in + 2.0 * 4.0 * static_cast<double>(p.hidden_size) + n * b_out;
    case NormVariant::rmsnorm_fp4quant: return n * b_in + weight + n / 2 + scales;
    case NormVariant::add_rmsnorm_fp4quant:
      return 3 * n * b_in + weight + n / 2 + scales * (p.both_sf_layouts ? 2.0 : 1.0);
  }
  throw std::logic_error("unknown norm variant");
}

std::size_t NormCase::bytes_per_copy() const {
  const auto n = static_cast<std::size_t>(p_.elements());
  std::size_t bytes = n * dtype_size(p_.input_dtype);
  if (p_.fused_add()) bytes += n * dtype_size(p_.input_dtype);
  if (p_.fp4()) {
    bytes += n / 2;
    for (const SfLayout layout : p_.sf_layouts()) {
      bytes += static_cast<std::size_t>(kernels::quant::sf_bytes(layout, p_.rows(), p_.hidden_size / p_.fp4_block()));
    }
  } else if (!p_.in_place()) {
    bytes += n * dtype_size(p_.out_dtype);
  }
  return bytes;
}

std::size_t NormCase::reference_bytes() const {
  // fp32 reference output (+ residual) and one fp32 scratch for converting a backend's tensors.
  const auto n = static_cast<std::size_t>(p_.elements());
  return n * sizeof(float) * (p_.fused_add() ? 3 : 2);
}

std::vector<TensorInfo> NormCase::tensors() const {
  std::vector<int64_t> shape = {p_.batch_size, p_.hidden_size};
  std::vector<int64_t> stride = {p_.hidden_size, 1};
  if (p_.num_heads > 0) {
    shape = {p_.batch_size, p_.num_heads, p_.hidden_size};
    stride = {p_.num_heads * p_.hidden_size, p_.hidden_size, 1};
  }
  std::vector<TensorInfo> t = {{"input_tensor", shape, stride, p_.input_dtype}};
  if (p_.fused_add()) t.push_back({"residual_tensor", shape, stride, p_.input_dtype});
  if (p_.layernorm()) {
    t.push_back({"gamma", {p_.hidden_size}, {1}, DType::float32});
    t.push_back({"beta", {p_.hidden_size}, {1}, DType::float32});
  } else {
    t.push_back({"weight", {p_.hidden_size}, {1}, p_.input_dtype});
  }
  if (p_.fp4()) {
    const int64_t rows = p_.rows(), columns = p_.hidden_size / p_.fp4_block();
    t.push_back({"out_tensor", {rows, p_.hidden_size / 2}, {p_.hidden_size / 2, 1}, DType::uint8});
    for (const SfLayout layout : p_.sf_layouts()) {
      if (layout == SfLayout::linear) {
        t.push_back({"out_scale_linear", {rows, columns}, {columns, 1}, DType::uint8});
      } else {
        const int64_t bytes = kernels::quant::sf_bytes(layout, rows, columns);
        t.push_back({"out_scale_128x4", {bytes}, {1}, DType::uint8});
      }
    }
  } else if (!p_.in_place()) {
    t.push_back({"out_tensor", shape, stride, p_.out_dtype});
  }
  return t;
}

void NormCase::describe(const Log& log) const {
  for (const auto& flag : p_.ignored_flags) log.warning("--" + flag + " does not apply to this routine and is ignored");
  if (p_.quantized()) log.vverbose("scale = " + python_float(p_.scale));
  if (p_.fp4()) {
    log.vverbose(std::string("out_dtype = ") + (p_.fp4_format == BlockFormat::nvfp4 ? "nvfp4" : "mxfp4") +
                 ", block = " + std::to_string(p_.fp4_block()) + ", sf_layout = " +
                 (p_.both_sf_layouts ? "linear and 128x4" : p_.sf_swizzled ? "128x4" : "linear") +
                 (p_.fp4_format == BlockFormat::nvfp4 ? ", global_scale = 1.0" : ""));
  }
  log.vverbose("eps = " + python_float(p_.eps));
}

void NormCase::fill_inputs(int copy, cudaStream_t stream) {
  Copy& c = copies_.at(static_cast<std::size_t>(copy));
  const int64_t n = p_.elements();
  KBENCH_CUDA_CHECK(kernels::fill_normal(c.input.get(), p_.input_dtype, n, tensor_seed(seed_, copy, kInput), 0.0f,
                                         1.0f, stream));
  if (p_.fused_add()) {
    KBENCH_CUDA_CHECK(kernels::fill_normal(c.residual.get(), p_.input_dtype, n,
                                           tensor_seed(seed_, copy, kResidual), 0.0f, 1.0f, stream));
  }
  for (DeviceBuffer* out : {&c.output, &c.scales[0], &c.scales[1]}) {
    KBENCH_CUDA_CHECK(kernels::poison(out->get(), static_cast<int64_t>(out->bytes()), stream));
  }
}

void NormCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  seed_ = seed;
  const auto n = static_cast<std::size_t>(p_.elements());
  const std::size_t in_bytes = n * dtype_size(p_.input_dtype);
  const auto hidden = static_cast<std::size_t>(p_.hidden_size);
  if (p_.layernorm()) {
    // gamma and beta: fp32, N(0, 1) like the other norms' weight.
    weight_ = DeviceBuffer(hidden * sizeof(float));
    beta_ = DeviceBuffer(hidden * sizeof(float));
    KBENCH_CUDA_CHECK(kernels::fill_normal(weight_.get(), DType::float32, p_.hidden_size, tensor_seed(seed, 0, kWeight),
                                           0.0f, 1.0f, stream));
    KBENCH_CUDA_CHECK(kernels::fill_normal(beta_.get(), DType::float32, p_.hidden_size, tensor_seed(seed, 0, kBeta),
                                           0.0f, 1.0f, stream));
  } else if (p_.variant == NormVariant::fused_rmsnorm_silu) {
    weight_ = upload(uniform_weight_bits(p_.hidden_size, p_.input_dtype, tensor_seed(seed, 0, kWeight)), stream);
  } else {
    weight_ = DeviceBuffer(hidden * dtype_size(p_.input_dtype));
    KBENCH_CUDA_CHECK(kernels::fill_normal(weight_.get(), p_.input_dtype, p_.hidden_size,
                                           tensor_seed(seed, 0, kWeight), 0.0f, 1.0f, stream));
  }
  copies_.clear();
  for (int i = 0; i < copies; ++i) {
    Copy c;
    c.input = DeviceBuffer(in_bytes);
    if (p_.fused_add()) c.residual = DeviceBuffer(in_bytes);
    if (p_.fp4()) {
      c.output = DeviceBuffer(n / 2);
      const std::vector<SfLayout> layouts = p_.sf_layouts();
      for (std::size_t j = 0; j < layouts.size(); ++j) {
        c.scales[j] = DeviceBuffer(static_cast<std::size_t>(
            kernels::quant::sf_bytes(layouts[j], p_.rows(), p_.hidden_size / p_.fp4_block())));
      }
    } else if (!p_.in_place()) {
      c.output = DeviceBuffer(n * dtype_size(p_.out_dtype));
    }
    copies_.push_back(std::move(c));
    fill_inputs(i, stream);
  }
}

const NormCase::Copy& NormCase::copy_or_unallocated(int copy_index) const {
  static const Copy kUnallocated;
  return copy_index < 0 ? kUnallocated : copies_.at(static_cast<std::size_t>(copy_index));
}

kernels::RmsNormParams NormCase::params(int copy_index) const {
  const Copy& copy = copy_or_unallocated(copy_index);
  kernels::RmsNormParams k;
  k.input = copy.input.get();
  k.residual = p_.fused_add() ? copy.residual.get() : nullptr;
  k.weight = weight_.get();
  k.output = p_.in_place() ? copy.input.get() : copy.output.get();
  k.rows = p_.rows();
  k.hidden = p_.hidden_size;
  k.input_stride = k.residual_stride = k.output_stride = p_.hidden_size;
  k.eps = p_.eps;
  k.weight_offset =
      p_.variant == NormVariant::gemma_rmsnorm || p_.variant == NormVariant::gemma_fused_add_rmsnorm ? 1.0f : 0.0f;
  k.out_scale = p_.quantized() ? p_.scale : 1.0f;
  k.in_dtype = p_.input_dtype;
  k.out_dtype = p_.out_dtype;
  k.enable_pdl = p_.enable_pdl;
  k.silu = p_.variant == NormVariant::fused_rmsnorm_silu;
  return k;
}

kernels::RmsNormFp4Params NormCase::fp4_params(int copy_index) const {
  const Copy& copy = copy_or_unallocated(copy_index);
  kernels::RmsNormFp4Params k;
  k.input = copy.input.get();
  k.residual = p_.fused_add() ? copy.residual.get() : nullptr;
  k.weight = weight_.get();
  k.codes = copy.output.as<uint8_t>();
  const std::vector<SfLayout> layouts = p_.sf_layouts();
  for (std::size_t j = 0; j < layouts.size(); ++j) {
    (layouts[j] == SfLayout::linear ? k.scales_linear : k.scales_swizzled) = copy.scales[j].as<uint8_t>();
  }
  k.rows = p_.rows();
  k.hidden = p_.hidden_size;
  k.eps = p_.eps;
  k.global_scale = 1.0f;
  k.format = p_.fp4_format;
  k.in_dtype = p_.input_dtype;
  k.enable_pdl = p_.enable_pdl;
  return k;
}

kernels::LayerNormQuantParams NormCase::layernorm_params(int copy_index) const {
  const Copy& copy = copy_or_unallocated(copy_index);
  kernels::LayerNormQuantParams k;
  k.input = copy.input.get();
  k.gamma = weight_.as<float>();
  k.beta = beta_.as<float>();
  k.output = copy.output.get();
  k.rows = p_.rows();
  k.hidden = p_.hidden_size;
  k.eps = p_.eps;
  k.out_scale = p_.scale;
  k.in_dtype = p_.input_dtype;
  k.out_dtype = p_.out_dtype;
  k.enable_pdl = p_.enable_pdl;
  return k;
}

std::vector<CheckedOutput> NormCase::outputs() const {
  const auto n = static_cast<std::size_t>(p_.elements());
  const Tolerance residual_tolerance{0.01, 0.01};
  if (p_.fp4()) {
    // Bytes: compared by compare() (equal, or the other side of a rounding boundary).
    const Copy& c = copies_.at(0);
    std::vector<CheckedOutput> out = {{"output", c.output.get(), DType::uint8, n / 2, {0, 0}}};
    const std::vector<SfLayout> layouts = p_.sf_layouts();
    for (std::size_t j = 0; j < layouts.size(); ++j) {
      out.push_back({layouts[j] == SfLayout::linear ? "scale_linear" : "scale_128x4", c.scales[j].get(), DType::uint8,
                     c.scales[j].bytes(), {0, 0}});
    }
    if (p_.fused_add()) out.push_back({"residual", c.residual.get(), p_.input_dtype, n, residual_tolerance, false});
    return out;
  }
  if (p_.layernorm()) {
    return {{"output", copies_.at(0).output.get(), p_.out_dtype, n, {0.1, 0.1}}};
  }
  const kernels::RmsNormParams k = params(0);
  // fp8 outputs: one step of the grid on top (compare_quantized); the reference tool's 0.1 / 0.1.
  const Tolerance tolerance = p_.quantized() ? Tolerance{0.1, 0.1} : Tolerance{0.01, 0.01};
  std::vector<CheckedOutput> out = {{"output", k.output, p_.out_dtype, n, tolerance, !p_.in_place()}};
  if (p_.fused_add()) out.push_back({"residual", k.residual, p_.input_dtype, n, residual_tolerance, false});
  return out;
}

void NormCase::restore_inputs(cudaStream_t stream) { fill_inputs(0, stream); }

namespace {

// LayerNorm in double from the inputs read back (the host reference of layernorm_quant): the
// unrounded y * scale, which compare_quantized puts on the fp8 grid.
std::vector<float> layernorm_reference(const std::vector<float>& x, const std::vector<float>& gamma,
                                       const std::vector<float>& beta, int64_t rows, int64_t hidden, double eps,
                                       double scale) {
  std::vector<float> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * hidden;
    double sum = 0;
    for (int64_t j = 0; j < hidden; ++j) sum += row[j];
    const double mean = sum / static_cast<double>(hidden);
    double dev = 0;
    for (int64_t j = 0; j < hidden; ++j) dev += (row[j] - mean) * (row[j] - mean);
    const double rstd = 1.0 / std::sqrt(dev / static_cast<double>(hidden) + eps);
    for (int64_t j = 0; j < hidden; ++j) {
      out[static_cast<std::size_t>(r * hidden + j)] =
          static_cast<float>(((row[j] - mean) * rstd * gamma[static_cast<std::size_t>(j)] + beta[static_cast<std::size_t>(j)]) * scale);
    }
  }
  return out;
}

}  // namespace

std::vector<std::vector<float>> NormCase::reference(cudaStream_t stream) {
  const int64_t n = p_.elements();
  const auto count = static_cast<std::size_t>(n);
  if (p_.layernorm()) {
    const kernels::LayerNormQuantParams k = layernorm_params(0);
    const auto hidden = static_cast<std::size_t>(p_.hidden_size);
    return {layernorm_reference(read_as_floats(k.input, p_.input_dtype, count, stream),
                                read_as_floats(k.gamma, DType::float32, hidden, stream),
                                read_as_floats(k.beta, DType::float32, hidden, stream), p_.rows(), p_.hidden_size,
                                p_.eps, p_.scale)};
  }
  DeviceBuffer ref_out(count * sizeof(float));
  DeviceBuffer ref_residual(p_.fused_add() ? count * sizeof(float) : 0);
  kernels::RmsNormParams k = params(0);
  if (p_.fp4()) {
    // The norm half as an RMSNorm to fp32 (the reference kernel writes its unrounded y; the output
    // pointer only has to be a disjoint buffer of the size an fp8 output would need).
    k.output = ref_out.get();
    k.out_dtype = DType::fp8_e4m3;
  }
  KBENCH_CUDA_CHECK(kernels::launch_rmsnorm_reference(k, ref_out.as<float>(), ref_residual.as<float>(), stream));
  KBENCH_CUDA_CHECK(cudaGetLastError());
  std::vector<float> y = read_as_floats(ref_out.get(), DType::float32, count, stream);
  std::vector<std::vector<float>> expected;
  if (p_.fp4()) {
    // The host quantizer (quant_reference: the quantizers' byte-exact reference) on the fp32 y.
    for (const SfLayout layout : p_.sf_layouts()) {
      const quant_reference::Quantized q = quant_reference::quantize(y, p_.fp4_shape(layout));
      if (expected.empty()) expected.push_back(as_floats(q.data));
      expected.push_back(as_floats(q.scales));
    }
    fp4_values_ = std::move(y);
  } else {
    if (k.silu) {
      for (float& v : y) v = static_cast<float>(static_cast<double>(v) / (1.0 + std::exp(-static_cast<double>(v))));
    }
    expected.push_back(std::move(y));
  }
  if (p_.fused_add()) expected.push_back(read_as_floats(ref_residual.get(), DType::float32, count, stream));
  return expected;
}

std::vector<Comparison> NormCase::compare(const std::vector<CheckedOutput>& outputs,
                                          const std::vector<std::vector<float>>& expected,
                                          const std::vector<std::vector<float>>& got) const {
  if (!p_.fp4()) return Case::compare(outputs, expected, got);
  // The kernel's y differs from the reference's (fp64 sum of squares, exact rsqrt) by a few fp32
  // ulps, so a value within kFp4BoundaryTolerance of a rounding boundary may round to either side.
  // A scale byte is accepted when it is the reference's, or the scale of amax (1 -+ tol); a code
  // when it is e2m1(y (1 -+ tol) * factor) with the factor of the scale byte the kernel wrote.
  // Everything else (and every padding byte) must be equal. Accepted differences are counted.
  const double tol = kFp4BoundaryTolerance;
  const int64_t rows = p_.rows(), hidden = p_.hidden_size, block = p_.fp4_block(), columns = hidden / block;
  const std::vector<SfLayout> layouts = p_.sf_layouts();
  const float g = 1.0f;
  std::vector<Comparison> result;
  Comparison codes{"output", {0, 0}, static_cast<int64_t>(got[0].size()), 0, 0, ""};
  std::vector<Comparison> scales;
  for (std::size_t j = 0; j < layouts.size(); ++j) {
    scales.push_back({outputs[1 + j].name, {0, 0}, static_cast<int64_t>(got[1 + j].size()), 0, 0, ""});
  }
  int64_t boundary_codes = 0, boundary_scales = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < columns; ++k) {
      const float* y = fp4_values_.data() + r * hidden + k * block;
      float amax = 0.0f;
      for (int64_t i = 0; i < block; ++i) amax = std::max(amax, std::fabs(y[i]));
      const auto lo = quant_reference::block_scale(p_.fp4_format, static_cast<float>(amax * (1 - tol)), g);
      const auto hi = quant_reference::block_scale(p_.fp4_format, static_cast<float>(amax * (1 + tol)), g);
      uint8_t written = 0;
      bool written_ok = false;
      for (std::size_t j = 0; j < layouts.size(); ++j) {
        const auto at = static_cast<std::size_t>(quant_reference::scale_offset(layouts[j], r, k, columns));
        const float want = expected[1 + j][at], have = got[1 + j][at];
        const bool ok = have == want || have == lo.sf || have == hi.sf;
        if (!ok) ++scales[j].mismatches;
        if (ok && have != want) ++boundary_scales;
        if (j == 0) {
          written = static_cast<uint8_t>(have);
          written_ok = ok;
        }
      }
      // The codes are judged with the factor of the scale the kernel wrote (when that is accepted).
      const auto exact_scale = quant_reference::block_scale(p_.fp4_format, amax, g);
      const float factor = !written_ok || written == exact_scale.sf ? exact_scale.factor
                           : written == lo.sf                        ? lo.factor
                                                                     : hi.factor;
      for (int64_t i = 0; i < block; ++i) {
        const int64_t e = r * hidden + k * block + i;
        const auto byte = static_cast<std::size_t>(e / 2);
        const int shift = e % 2 == 0 ? 0 : 4;
        const auto have = static_cast<uint8_t>((static_cast<uint32_t>(got[0][byte]) >> shift) & 0xF);
        const auto want = static_cast<uint8_t>((static_cast<uint32_t>(expected[0][byte]) >> shift) & 0xF);
        const uint8_t low = quant_reference::e2m1_code(static_cast<float>(y[i] * (1 - tol)) * factor);
        const uint8_t high = quant_reference::e2m1_code(static_cast<float>(y[i] * (1 + tol)) * factor);
        const uint8_t exact = quant_reference::e2m1_code(y[i] * factor);
        if (have == want || (written_ok && (have == low || have == high || have == exact))) {
          if (have != want) ++boundary_codes;
        } else {
          ++codes.mismatches;
        }
      }
    }
  }
  // Padding scale bytes (128x4): must be 0.
  for (std::size_t j = 0; j < layouts.size(); ++j) {
    if (layouts[j] == SfLayout::linear) continue;
    std::vector<bool> real(got[1 + j].size(), false);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < columns; ++k) real[static_cast<std::size_t>(quant_reference::scale_offset(layouts[j], r, k, columns))] = true;
    }
    for (std::size_t b = 0; b < real.size(); ++b) {
      if (!real[b] && got[1 + j][b] != 0.0f) ++scales[j].mismatches;
    }
  }
  const std::string rule = "bytes equal to the host quantizer's on the fp64 reference norm, except values within " +
                           std::to_string(tol) + " (relative) of a rounding boundary (" +
                           std::to_string(boundary_codes) + " codes and " + std::to_string(boundary_scales) +
                           " scales took the other side)";
  codes.rule = rule;
  result.push_back(codes);
  for (Comparison& c : scales) {
    c.rule = rule;
    result.push_back(c);
  }
  if (p_.fused_add()) {
    const std::size_t i = outputs.size() - 1;
    result.push_back(compare_isclose(outputs[i].name, expected[i], got[i], outputs[i].tolerance));
  }
  return result;
}

}  // namespace kbench
