#include "routines/norm/norm_case.hpp"

#include <cstring>
#include <stdexcept>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "routines/device_tensors.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"

namespace kbench {
namespace {

enum TensorId { kInput = 0, kResidual = 1, kWeight = 2 };

}  // namespace

double norm_flops(const NormProblem& p) {
  const double n = static_cast<double>(p.elements());
  return (p.fused_add() ? 6.0 : 5.0) * n;
}

double norm_bytes(const NormProblem& p) {
  const double n = static_cast<double>(p.elements());
  const double b_in = static_cast<double>(dtype_size(p.input_dtype));
  const double b_out = static_cast<double>(dtype_size(p.out_dtype));
  const double weight = static_cast<double>(p.hidden_size) * b_in;
  switch (p.variant) {
    case NormVariant::rmsnorm:
    case NormVariant::gemma_rmsnorm: return 2 * n * b_in + weight;
    case NormVariant::fused_add_rmsnorm: return 4 * n * b_in + weight;
    case NormVariant::rmsnorm_quant: return n * b_in + weight + n * b_out;
    case NormVariant::fused_add_rmsnorm_quant: return 3 * n * b_in + weight + n * b_out;
  }
  throw std::logic_error("unknown norm variant");
}

std::size_t NormCase::bytes_per_copy() const {
  const auto n = static_cast<std::size_t>(p_.elements());
  std::size_t bytes = n * dtype_size(p_.input_dtype);
  if (p_.fused_add()) bytes += n * dtype_size(p_.input_dtype);
  if (!p_.in_place()) bytes += n * dtype_size(p_.out_dtype);
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
  t.push_back({"weight", {p_.hidden_size}, {1}, p_.input_dtype});
  if (!p_.in_place()) t.push_back({"out_tensor", shape, stride, p_.out_dtype});
  return t;
}

void NormCase::describe(const Log& log) const {
  for (const auto& flag : p_.ignored_flags) log.warning("--" + flag + " does not apply to this routine and is ignored");
  if (p_.quantized()) log.vverbose("scale = " + python_float(p_.scale));
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
  if (!p_.in_place()) KBENCH_CUDA_CHECK(kernels::poison(c.output.get(), static_cast<int64_t>(c.output.bytes()), stream));
}

void NormCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  seed_ = seed;
  const auto n = static_cast<std::size_t>(p_.elements());
  const std::size_t in_bytes = n * dtype_size(p_.input_dtype);
  weight_ = DeviceBuffer(static_cast<std::size_t>(p_.hidden_size) * dtype_size(p_.input_dtype));
  KBENCH_CUDA_CHECK(kernels::fill_normal(weight_.get(), p_.input_dtype, p_.hidden_size, tensor_seed(seed, 0, kWeight),
                                         0.0f, 1.0f, stream));
  copies_.clear();
  for (int i = 0; i < copies; ++i) {
    Copy c;
    c.input = DeviceBuffer(in_bytes);
    if (p_.fused_add()) c.residual = DeviceBuffer(in_bytes);
    if (!p_.in_place()) c.output = DeviceBuffer(n * dtype_size(p_.out_dtype));
    copies_.push_back(std::move(c));
    fill_inputs(i, stream);
  }
}

kernels::RmsNormParams NormCase::params(int copy_index) const {
  static const Copy kUnallocated;
  const Copy& copy = copy_index < 0 ? kUnallocated : copies_.at(static_cast<std::size_t>(copy_index));
  kernels::RmsNormParams k;
  k.input = copy.input.get();
  k.residual = p_.fused_add() ? copy.residual.get() : nullptr;
  k.weight = weight_.get();
  k.output = p_.in_place() ? copy.input.get() : copy.output.get();
  k.rows = p_.rows();
  k.hidden = p_.hidden_size;
  k.input_stride = k.residual_stride = k.output_stride = p_.hidden_size;
  k.eps = p_.eps;
  k.weight_offset = p_.variant == NormVariant::gemma_rmsnorm ? 1.0f : 0.0f;
  k.out_scale = p_.quantized() ? p_.scale : 1.0f;
  k.in_dtype = p_.input_dtype;
  k.out_dtype = p_.out_dtype;
  k.enable_pdl = p_.enable_pdl;
  return k;
}

std::vector<CheckedOutput> NormCase::outputs() const {
  const kernels::RmsNormParams k = params(0);
  const auto n = static_cast<std::size_t>(p_.elements());
  // fp8 outputs: one step of the grid on top (compare_quantized); the reference tool's 0.1 / 0.1.
  const Tolerance tolerance = p_.quantized() ? Tolerance{0.1, 0.1} : Tolerance{0.01, 0.01};
  std::vector<CheckedOutput> out = {{"output", k.output, p_.out_dtype, n, tolerance, !p_.in_place()}};
  if (p_.fused_add()) out.push_back({"residual", k.residual, p_.input_dtype, n, {0.01, 0.01}, false});
  return out;
}

void NormCase::restore_inputs(cudaStream_t stream) { fill_inputs(0, stream); }

std::vector<std::vector<float>> NormCase::reference(cudaStream_t stream) {
  const int64_t n = p_.elements();
  DeviceBuffer ref_out(static_cast<std::size_t>(n) * sizeof(float));
  DeviceBuffer ref_residual(p_.fused_add() ? static_cast<std::size_t>(n) * sizeof(float) : 0);
  KBENCH_CUDA_CHECK(kernels::launch_rmsnorm_reference(params(0), ref_out.as<float>(), ref_residual.as<float>(), stream));
  KBENCH_CUDA_CHECK(cudaGetLastError());
  std::vector<std::vector<float>> expected = {read_as_floats(ref_out.get(), DType::float32, n, stream)};
  if (p_.fused_add()) expected.push_back(read_as_floats(ref_residual.get(), DType::float32, n, stream));
  return expected;
}

}  // namespace kbench
