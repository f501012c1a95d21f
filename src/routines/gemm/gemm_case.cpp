#include "routines/gemm/gemm_case.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/quantization/quantize.hpp"
#include "routines/device_tensors.hpp"

namespace kbench {
namespace {

using kernels::gemm::ScaleMajor;

enum TensorId { kA = 0, kB = 1, kBias = 2 };


// mm_fp4's operand bytes (two codes a byte) and scale bytes.
std::size_t fp4_bytes(int64_t rows, int64_t k) { return static_cast<std::size_t>(rows * k / 2); }
std::size_t fp4_scale_bytes(kernels::quant::SfLayout layout, int64_t rows, const GemmProblem& p) {
  return static_cast<std::size_t>(kernels::quant::sf_bytes(layout, rows, p.k / p.fp4_block()));
}

std::string shape_text(std::initializer_list<int64_t> dims) {
  std::string s = "torch.Size([";
  for (const int64_t d : dims) s += (s.back() == '[' ? "" : ", ") + std::to_string(d);
  return s + "])";
}

}  // namespace

double GemmProblem::cosine_threshold() const {
  switch (variant) {
    case GemmVariant::gemm_fp8_nt_groupwise:
    case GemmVariant::group_gemm_fp8_nt_groupwise: return 0.0;
    case GemmVariant::mm_fp4: return 0.97;
    default: return 0.99;
  }
}

double gemm_flops(const GemmProblem& p) {
  const double mnk = static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  const double bias = p.bias ? static_cast<double>(p.m) * static_cast<double>(p.n) : 0.0;
  return 2.0 * mnk * static_cast<double>(p.batch) + bias;
}

double gemm_bytes(const GemmProblem& p) {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k);
  const double out = m * n * static_cast<double>(dtype_size(p.out_dtype));
  const double batch = static_cast<double>(p.batch);
  switch (p.variant) {
    case GemmVariant::gemm_fp8_nt_groupwise:
    case GemmVariant::group_gemm_fp8_nt_groupwise: return batch * (m * k + n * k + out);  // scales not counted
    case GemmVariant::bmm_fp8:
      // DEFECT kept: the reference counts one batch entry's bytes (TB/s understated by the batch).
      return m * k * static_cast<double>(dtype_size(p.a_dtype)) + n * k * static_cast<double>(dtype_size(p.b_dtype)) + out;
    case GemmVariant::mm_fp4: return 0.5 * m * k + 0.5 * n * k + out;  // scale factors not counted
    case GemmVariant::mm_fp8: return m * k + n * k + out;
    case GemmVariant::mm_bf16: return 2 * m * k + 2 * k * n + out + (p.bias ? 2 * n : 0.0);
    case GemmVariant::bmm_bf16: return batch * (2 * m * k + 2 * k * n + out);
  }
  throw std::logic_error("unknown GEMM variant");
}

std::size_t GemmCase::bytes_per_copy() const {
  if (p_.variant == GemmVariant::mm_fp4) {
    return fp4_bytes(p_.m, p_.k) + fp4_bytes(p_.n, p_.k) + bytes_of(p_.out_elements(), p_.out_dtype) +
           fp4_scale_bytes(p_.a_sf_layout(), p_.m, p_) + fp4_scale_bytes(p_.b_sf_layout(), p_.n, p_);
  }
  std::size_t bytes = bytes_of(p_.a_elements(), p_.a_dtype) + bytes_of(p_.b_elements(), p_.b_dtype) +
                      bytes_of(p_.out_elements(), p_.out_dtype);
  if (p_.groupwise() || p_.per_tensor()) bytes += bytes_of(p_.a_scale_count() + p_.b_scale_count(), DType::float32);
  if (p_.bias) bytes += bytes_of(p_.n, DType::bfloat16);
  return bytes;
}

std::size_t GemmCase::reference_bytes() const {
  // The fp32 reference output, and the scratch that builds the quantized operands (the larger
  // source tensor: fp32 for groupwise, bfloat16 for per-tensor).
  const int64_t source = std::max(p_.a_elements(), p_.b_elements());
  const std::size_t scratch = p_.groupwise()                                       ? bytes_of(source, DType::float32)
                              : p_.per_tensor() || p_.variant == GemmVariant::mm_fp4 ? bytes_of(source, DType::bfloat16)
                                                                                     : 0;
  return std::max(bytes_of(p_.out_elements(), DType::float32), scratch);
}

std::vector<TensorInfo> GemmCase::tensors() const {
  const int64_t m = p_.m, n = p_.n, k = p_.k, b = p_.batch, kb = p_.k_blocks();
  switch (p_.variant) {
    case GemmVariant::bmm_fp8:
      return {{"input_fp8", {b, m, k}, {m * k, k, 1}, p_.a_dtype}, {"mat2_fp8", {b, k, n}, {n * k, 1, k}, p_.b_dtype}};
    case GemmVariant::mm_fp8:
      return {{"input_fp8", {m, k}, {k, 1}, p_.a_dtype}, {"mat2_fp8", {n, k}, {k, 1}, p_.b_dtype}};
    case GemmVariant::gemm_fp8_nt_groupwise:
    case GemmVariant::group_gemm_fp8_nt_groupwise: {
      const bool group = p_.variant == GemmVariant::group_gemm_fp8_nt_groupwise;
      const int64_t rows = b * m, nb = p_.n_blocks();
      const bool mn = p_.major == ScaleMajor::mn;
      std::vector<TensorInfo> t = {
          {"a_fp8", {rows, k}, {k, 1}, p_.a_dtype},
          group ? TensorInfo{"b_fp8", {b, n, k}, {n * k, k, 1}, p_.b_dtype} : TensorInfo{"b_fp8", {n, k}, {k, 1}, p_.b_dtype},
          mn ? TensorInfo{"a_scale", {kb, rows}, {rows, 1}, DType::float32}
             : TensorInfo{"a_scale", {rows, kb}, {kb, 1}, DType::float32}};
      const std::vector<int64_t> b_shape = mn ? std::vector<int64_t>{kb, nb} : std::vector<int64_t>{nb, kb};
      const std::vector<int64_t> b_stride = mn ? std::vector<int64_t>{nb, 1} : std::vector<int64_t>{kb, 1};
      if (group) {
        t.push_back({"b_scale", {b, b_shape[0], b_shape[1]}, {nb * kb, b_stride[0], 1}, DType::float32});
      } else {
        t.push_back({"b_scale", b_shape, b_stride, DType::float32});
      }
      return t;
    }
    case GemmVariant::mm_fp4:
      return {{"input_fp4", {m, k / 2}, {k / 2, 1}, DType::uint8}, {"mat2_fp4", {n, k / 2}, {k / 2, 1}, DType::uint8}};
    case GemmVariant::mm_bf16: {
      std::vector<TensorInfo> t = {{"a", {m, k}, {k, 1}, p_.a_dtype}, {"b", {k, n}, {1, k}, p_.b_dtype}};
      if (p_.bias) t.push_back({"bias", {n}, {1}, DType::bfloat16});
      return t;
    }
    case GemmVariant::bmm_bf16:
      return {{"A", {b, m, k}, {m * k, k, 1}, p_.a_dtype}, {"B", {b, k, n}, {n * k, 1, k}, p_.b_dtype}};
  }
  throw std::logic_error("unknown GEMM variant");
}

void GemmCase::describe(const Log& log) const {
  for (const auto& flag : p_.ignored_flags) log.warning("--" + flag + " does not apply to this routine and is ignored");
  if (p_.groupwise()) {
    log.vverbose("a_val.shape = " + shape_text({p_.batch * p_.m, p_.k}));
    log.vverbose("b_val.shape = " +
                 (p_.variant == GemmVariant::group_gemm_fp8_nt_groupwise ? shape_text({p_.batch, p_.n, p_.k})
                                                                         : shape_text({p_.n, p_.k})));
    if (p_.variant == GemmVariant::group_gemm_fp8_nt_groupwise) {
      log.vverbose("m_indptr.shape = " + shape_text({p_.batch + 1}));
    }
  }
  if (p_.per_tensor() && !copies_.empty()) {
    const GemmOperands o = operands(0);
    for (const auto& [name, scale] : {std::pair{"input_inv_s", o.a_scale}, std::pair{"mat2_inv_s", o.b_scale}}) {
      const float value = read_as_floats(scale, DType::float32, 1, nullptr).at(0);
      log.vverbose(std::string(name) + " = tensor(" + python_float(value) + ", device='cuda:0')");
      log.vverbose(std::string(name) + ".dtype = torch.float32");
    }
  }
  if (p_.variant == GemmVariant::mm_bf16) log.vverbose(std::string("use_pdl = ") + (p_.enable_pdl ? "True" : "False"));
}

void GemmCase::build_per_tensor(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const {
  // The reference draws bfloat16 normals and quantizes each whole tensor with one scale.
  DeviceBuffer source(bytes_of(std::max(p_.a_elements(), p_.b_elements()), DType::bfloat16));
  DeviceBuffer amax(sizeof(float));
  const struct {
    DeviceBuffer* data;
    DeviceBuffer* scale;
    int64_t elements;
    DType dtype;
    TensorId id;
  } operands[] = {{&c.a, &c.a_scale, p_.a_elements(), p_.a_dtype, kA}, {&c.b, &c.b_scale, p_.b_elements(), p_.b_dtype, kB}};
  for (const auto& o : operands) {
    KBENCH_CUDA_CHECK(kernels::fill_normal(source.get(), DType::bfloat16, o.elements, tensor_seed(seed, copy, o.id), 0.0f,
                                           1.0f, stream));
    KBENCH_CUDA_CHECK(kernels::gemm::quantize_per_tensor(source.get(), o.elements, o.dtype, amax.as<float>(),
                                                         o.data->as<uint8_t>(), o.scale->as<float>(), stream));
  }
  // `source` is freed on return: the stream must be done with it.
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void GemmCase::build_groupwise(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const {
  // The reference draws fp32 normals, B scaled by 1 / sqrt(k), and quantizes them block by block.
  DeviceBuffer source(bytes_of(std::max(p_.a_elements(), p_.b_elements()), DType::float32));
  kernels::gemm::GroupwiseQuantizeParams q;
  q.input = source.as<float>();
  q.tile = p_.tile;
  q.major = p_.major;
  KBENCH_CUDA_CHECK(kernels::fill_normal(source.get(), DType::float32, p_.a_elements(), tensor_seed(seed, copy, kA), 0.0f,
                                         1.0f, stream));
  q.output = c.a.as<uint8_t>();
  q.scales = c.a_scale.as<float>();
  q.groups = 1;  // A's scale layout spans every group's rows
  q.rows = p_.batch * p_.m;
  q.k = p_.k;
  q.block_rows = 1;
  KBENCH_CUDA_CHECK(kernels::gemm::quantize_groupwise(q, stream));
  KBENCH_CUDA_CHECK(kernels::fill_normal(source.get(), DType::float32, p_.b_elements(), tensor_seed(seed, copy, kB), 0.0f,
                                         1.0f / std::sqrt(static_cast<float>(p_.k)), stream));
  q.output = c.b.as<uint8_t>();
  q.scales = c.b_scale.as<float>();
  q.groups = p_.batch;
  q.rows = p_.n;
  q.block_rows = p_.tile;
  KBENCH_CUDA_CHECK(kernels::gemm::quantize_groupwise(q, stream));
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void GemmCase::build_fp4(Copy& c, uint64_t seed, int copy, cudaStream_t stream) const {
  // The reference draws bfloat16 normals A (m, k) and B (n, k) and quantizes each with its own
  // global scale (NVFP4: 2688 / amax; MXFP4: none) in its layout; alpha = 1 / (gA gB).
  DeviceBuffer source(bytes_of(std::max(p_.m, p_.n) * p_.k, DType::bfloat16));
  DeviceBuffer amax(sizeof(float));
  const struct {
    DeviceBuffer* data;
    DeviceBuffer* scales;
    float* global_scale;
    int64_t rows;
    kernels::quant::SfLayout layout;
    TensorId id;
  } operands[] = {{&c.a, &c.a_block_scales, &c.a_global_scale, p_.m, p_.a_sf_layout(), kA},
                  {&c.b, &c.b_block_scales, &c.b_global_scale, p_.n, p_.b_sf_layout(), kB}};
  for (const auto& o : operands) {
    const int64_t elements = o.rows * p_.k;
    KBENCH_CUDA_CHECK(kernels::fill_normal(source.get(), DType::bfloat16, elements, tensor_seed(seed, copy, o.id), 0.0f,
                                           1.0f, stream));
    *o.global_scale = 1.0f;
    if (p_.use_nvfp4) {
      KBENCH_CUDA_CHECK(kernels::gemm::amax_bfloat16(source.get(), elements, amax.as<float>(), stream));
      *o.global_scale = 2688.0f / read_as_floats(amax.get(), DType::float32, 1, stream).at(0);  // 448 * 6
    }
    kernels::QuantizeParams q;
    q.input = source.get();
    q.output = o.data->as<uint8_t>();
    q.scales = o.scales->as<uint8_t>();
    q.rows = o.rows;
    q.columns = q.padded_columns = p_.k;
    q.block_size = static_cast<int>(p_.fp4_block());
    q.format = p_.fp4_format();
    q.layout = o.layout;
    q.global_scale = *o.global_scale;
    KBENCH_CUDA_CHECK(kernels::launch_quantize(q, stream));
  }
  c.alpha = 1.0f / (c.a_global_scale * c.b_global_scale);
  // `source` is freed on return: the stream must be done with it.
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void GemmCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  const bool fp4 = p_.variant == GemmVariant::mm_fp4;
  copies_.clear();
  for (int i = 0; i < copies; ++i) {
    Copy c;
    c.a = DeviceBuffer(fp4 ? fp4_bytes(p_.m, p_.k) : bytes_of(p_.a_elements(), p_.a_dtype));
    c.b = DeviceBuffer(fp4 ? fp4_bytes(p_.n, p_.k) : bytes_of(p_.b_elements(), p_.b_dtype));
    c.out = DeviceBuffer(bytes_of(p_.out_elements(), p_.out_dtype));
    if (p_.groupwise() || p_.per_tensor()) {
      c.a_scale = DeviceBuffer(bytes_of(p_.a_scale_count(), DType::float32));
      c.b_scale = DeviceBuffer(bytes_of(p_.b_scale_count(), DType::float32));
    }
    if (fp4) {
      c.a_block_scales = DeviceBuffer(fp4_scale_bytes(p_.a_sf_layout(), p_.m, p_));
      c.b_block_scales = DeviceBuffer(fp4_scale_bytes(p_.b_sf_layout(), p_.n, p_));
      build_fp4(c, seed, i, stream);
    } else if (p_.groupwise()) {
      build_groupwise(c, seed, i, stream);
    } else if (p_.per_tensor()) {
      build_per_tensor(c, seed, i, stream);
    } else {
      KBENCH_CUDA_CHECK(kernels::fill_normal(c.a.get(), p_.a_dtype, p_.a_elements(), tensor_seed(seed, i, kA), 0.0f, 1.0f,
                                             stream));
      KBENCH_CUDA_CHECK(kernels::fill_normal(c.b.get(), p_.b_dtype, p_.b_elements(), tensor_seed(seed, i, kB), 0.0f, 1.0f,
                                             stream));
    }
    if (p_.bias) {
      c.bias = DeviceBuffer(bytes_of(p_.n, DType::bfloat16));
      KBENCH_CUDA_CHECK(kernels::fill_normal(c.bias.get(), DType::bfloat16, p_.n, tensor_seed(seed, i, kBias), 0.0f, 1.0f,
                                             stream));
    }
    KBENCH_CUDA_CHECK(kernels::poison(c.out.get(), static_cast<int64_t>(c.out.bytes()), stream));
    copies_.push_back(std::move(c));
  }
}

GemmOperands GemmCase::operands(int copy) const {
  const Copy& c = copies_.at(static_cast<std::size_t>(copy));
  return {c.a.get(),
          c.b.get(),
          c.out.get(),
          c.a_scale.as<float>(),
          c.b_scale.as<float>(),
          c.bias.get(),
          c.a_block_scales.as<uint8_t>(),
          c.b_block_scales.as<uint8_t>(),
          c.alpha};
}

std::vector<CheckedOutput> GemmCase::outputs() const {
  const Tolerance tolerance = p_.groupwise() ? Tolerance{1e-2, 1e-2} : Tolerance{};
  return {{"output", operands(0).out, p_.out_dtype, static_cast<std::size_t>(p_.out_elements()), tolerance}};
}

std::vector<std::vector<float>> GemmCase::reference(cudaStream_t stream) {
  const GemmOperands o = operands(0);
  kernels::gemm::ReferenceGemmParams r;
  r.batches = p_.batch;
  r.m = p_.m;
  r.n = p_.n;
  r.k = p_.k;
  r.a = {o.a, p_.a_dtype, p_.m * p_.k};
  r.b = {o.b, p_.b_dtype, p_.n * p_.k};
  if (p_.per_tensor()) {
    r.a.tensor_scale = o.a_scale;
    r.b.tensor_scale = o.b_scale;
  }
  if (p_.groupwise()) {
    r.a.block_scales = o.a_scale;
    r.a.block_rows = 1;
    r.a.scale_block_rows = p_.batch * p_.m;
    r.a.scale_batch_rows = p_.m;
    r.b.block_scales = o.b_scale;
    r.b.block_rows = p_.tile;
    r.b.scale_block_rows = p_.n_blocks();
    r.b.scale_batch_stride = p_.n_blocks() * p_.k_blocks();
  }
  if (p_.variant == GemmVariant::mm_fp4) {
    // The fp32 product of the dequantized operands (the reference compares against the unquantized
    // bf16 product; its cosine rule passes either).
    const Copy& c = copies_.front();
    for (auto [operand, scales, layout, g] : {std::tuple{&r.a, o.a_block_scales, p_.a_sf_layout(), c.a_global_scale},
                                              std::tuple{&r.b, o.b_block_scales, p_.b_sf_layout(), c.b_global_scale}}) {
      operand->fp4_scales = scales;
      operand->fp4_format = p_.fp4_format();
      operand->sf_layout = layout;
      operand->sf_columns = p_.k / p_.fp4_block();
      operand->global_scale = g;
    }
  }
  r.tile = p_.tile;
  r.major = p_.major;
  r.bias = p_.bias ? o.bias : nullptr;
  r.out_dtype = p_.out_dtype;
  DeviceBuffer out(bytes_of(p_.out_elements(), DType::float32));
  r.out = out.as<float>();
  KBENCH_CUDA_CHECK(kernels::gemm::reference_gemm(r, stream));
  return {read_as_floats(out.get(), DType::float32, static_cast<std::size_t>(p_.out_elements()), stream)};
}

std::vector<Comparison> GemmCase::compare(const std::vector<CheckedOutput>& outputs,
                                          const std::vector<std::vector<float>>& expected,
                                          const std::vector<std::vector<float>>& got) const {
  if (p_.cosine_threshold() == 0.0) return Case::compare(outputs, expected, got);
  return compare_by_cosine(expected.at(0), got.at(0), p_.cosine_threshold());
}

std::vector<Comparison> compare_by_cosine(std::span<const float> expected, std::span<const float> got, double threshold) {
  const double cosine = cosine_similarity(expected, got);
  double expected_sq = 0, got_sq = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    expected_sq += static_cast<double>(expected[i]) * expected[i];
    got_sq += static_cast<double>(got[i]) * got[i];
  }
  const double norm_ratio = std::sqrt(got_sq / expected_sq);
  char text[200];
  Comparison similar;
  similar.tensor = "output";
  similar.total = 1;
  similar.mismatches = cosine >= threshold ? 0 : 1;  // NaN fails
  std::snprintf(text, sizeof text, "cosine similarity with kbench's fp32 reference %.6g, below the reference's %g", cosine,
                threshold);
  similar.rule = text;
  Comparison scaled;
  scaled.tensor = "output (L2 norm)";
  scaled.total = 1;
  scaled.mismatches = std::fabs(norm_ratio - 1.0) <= 1.0 - threshold ? 0 : 1;
  std::snprintf(text, sizeof text, "L2 norm %.6g times the fp32 reference's, beyond 1 +- %g (kbench's check of the scales)",
                norm_ratio, 1.0 - threshold);
  scaled.rule = text;
  return {similar, scaled};
}

}  // namespace kbench
