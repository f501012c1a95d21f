#include "routines/attention/mla_case.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/attention/attention_formulas.hpp"
#include "routines/device_tensors.hpp"

namespace kbench {
namespace {

// Tensor ids for tensor_seed: one per random input.
enum TensorId { kQNope = 24, kQPe = 25, kCkv = 26, kKpe = 27 };

int64_t average_length(const std::vector<int32_t>& lens) {
  const int64_t total = std::accumulate(lens.begin(), lens.end(), int64_t{0});
  return total / std::max<int64_t>(static_cast<int64_t>(lens.size()), 1);
}

}  // namespace

MlaCase::MlaCase(MlaProblem problem) : p_(std::move(problem)) {
  if (is_fp8(p_.q_dtype)) q_scale_ = 1.0f / kFp8DataScale;
  if (is_fp8(p_.kv_dtype)) kv_scale_ = 1.0f / kFp8DataScale;
}

double MlaCase::flops() const {
  return mla_flops(p_.num_heads, p_.head_dim_ckv, p_.head_dim_kpe, p_.s_qo, p_.pages.seq_lens);
}

double MlaCase::bytes() const {
  return mla_bytes(p_.num_heads, p_.head_dim_ckv, p_.head_dim_kpe, p_.s_qo, static_cast<double>(dtype_size(p_.q_dtype)),
                   static_cast<double>(dtype_size(p_.kv_dtype)), p_.pages.seq_lens);
}

std::size_t MlaCase::bytes_per_copy() const {
  return (p_.q_nope_elements() + p_.q_pe_elements()) * dtype_size(p_.q_dtype) +
         p_.cache_tokens() * (p_.head_dim_ckv + p_.head_dim_kpe) * dtype_size(p_.kv_dtype) +
         p_.out_elements() * dtype_size(p_.out_dtype);
}

std::size_t MlaCase::reference_bytes() const { return 2 * p_.out_elements() * sizeof(float); }

std::vector<TensorInfo> MlaCase::tensors() const {
  const int64_t rows = p_.query_rows(), h = p_.num_heads, ckv = p_.head_dim_ckv, kpe = p_.head_dim_kpe;
  const int64_t pages = p_.pages.total_pages, ps = p_.page_size, b = p_.batch;
  const int64_t per_request = p_.pages.pages_per_request;
  return {
      {"q_nope", {rows, h, ckv}, {h * ckv, ckv, 1}, p_.q_dtype},
      {"q_pe", {rows, h, kpe}, {h * kpe, kpe, 1}, p_.q_dtype},
      {"ckv_cache", {pages, ps, ckv}, {ps * ckv, ckv, 1}, p_.kv_dtype},
      {"kpe_cache", {pages, ps, kpe}, {ps * kpe, kpe, 1}, p_.kv_dtype},
      {"block_tables", {b, per_request}, {per_request, 1}, DType::int32},
      {"qo_indptr", {b + 1}, {1}, DType::int32},
      {"kv_indptr", {b + 1}, {1}, DType::int32},
      {"kv_indices", {static_cast<int64_t>(p_.pages.indices.size())}, {1}, DType::int32},
      {"kv_lens", {b, 1, 1, 1}, {1, 1, 1, 1}, DType::int32},
      {"out", {rows, h, ckv}, {h * ckv, ckv, 1}, p_.out_dtype},
  };
}

void MlaCase::describe(const Log& log) const {
  log.verbose("Average actual seq len: " + std::to_string(average_length(p_.pages.seq_lens)));
  log.vverbose("actual_seq_lens_kv.flatten() = " + lengths_text(p_.pages.seq_lens));
  log.vverbose("num_pages_per_seq = " + std::to_string(p_.pages.pages_per_request));
  log.vverbose("total_num_pages = " + std::to_string(p_.pages.total_pages));
  log.vverbose("sm_scale = " + python_float(sm_scale()));
  log.vverbose("q_pe is random (the reference's is zeros, which hides the rope half from its refcheck)");
  if (is_fp8(p_.q_dtype)) log.vverbose("q_scale = " + python_float(q_scale_));
  if (is_fp8(p_.kv_dtype)) log.vverbose("ckv_scale = kpe_scale = " + python_float(kv_scale_));
}

std::vector<std::pair<std::string, std::string>> MlaCase::result_columns() const {
  return {{"avg_actual_seq_len", std::to_string(average_length(p_.pages.seq_lens))},
          {"causal", "True"}};  // MLA decode is always causal (bottom-right); --causal is ignored
}

float MlaCase::sm_scale() { return static_cast<float>(1.0 / std::sqrt(128.0 + 64.0)); }

MlaTables MlaCase::tables() const {
  return {qo_indptr_.as<int32_t>(), kv_indptr_.as<int32_t>(), kv_indices_.as<int32_t>(), kv_len_.as<int32_t>(),
          block_table_.as<int32_t>()};
}

void* MlaCase::out(int copy) const { return copies_.at(static_cast<std::size_t>(copy)).out.get(); }

kernels::MlaParams MlaCase::params(int copy_index) const {
  static const Copy kUnallocated;
  const Copy& copy = copy_index == kNoCopy ? kUnallocated : copies_.at(static_cast<std::size_t>(copy_index));
  kernels::MlaParams k;
  k.q_nope = copy.q_nope.get();
  k.q_pe = copy.q_pe.get();
  k.q_dtype = p_.q_dtype;
  k.q_scale = q_scale_;
  k.ckv = copy.ckv.get();
  k.kpe = copy.kpe.get();
  k.kv_dtype = p_.kv_dtype;
  k.ckv_scale = kv_scale_;
  k.kpe_scale = kv_scale_;
  k.kv_indptr = kv_indptr_.as<int32_t>();
  k.kv_indices = kv_indices_.as<int32_t>();
  k.kv_len = kv_len_.as<int32_t>();
  k.batch = p_.batch;
  k.s_qo = p_.s_qo;
  k.num_heads = p_.num_heads;
  k.head_dim_ckv = p_.head_dim_ckv;
  k.head_dim_kpe = p_.head_dim_kpe;
  k.page_size = p_.page_size;
  k.sm_scale = sm_scale();
  return k;
}

void MlaCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  qo_indptr_ = upload(p_.qo_indptr, stream);
  kv_indptr_ = upload(p_.pages.indptr, stream);
  kv_indices_ = upload(p_.pages.indices, stream);
  kv_len_ = upload(p_.pages.seq_lens, stream);
  block_table_ = upload(p_.pages.block_table, stream);
  // FP8 tensors hold the reference's values times kFp8DataScale, dequantised by q_scale_ / kv_scale_.
  const float q_magnitude = is_fp8(p_.q_dtype) ? kFp8DataScale : 1.0f;
  const float kv_magnitude = is_fp8(p_.kv_dtype) ? kFp8DataScale : 1.0f;
  const auto normal = [&](const DeviceBuffer& buffer, DType dtype, std::size_t count, uint64_t tensor_seed_value,
                          float stddev) {
    KBENCH_CUDA_CHECK(kernels::fill_normal(buffer.get(), dtype, static_cast<int64_t>(count), tensor_seed_value, 0.0f,
                                           stddev, stream));
  };
  copies_.clear();
  for (int i = 0; i < copies; ++i) {
    const std::size_t ckv_elements = p_.cache_tokens() * p_.head_dim_ckv;
    const std::size_t kpe_elements = p_.cache_tokens() * p_.head_dim_kpe;
    Copy c{DeviceBuffer(p_.q_nope_elements() * dtype_size(p_.q_dtype)),
           DeviceBuffer(p_.q_pe_elements() * dtype_size(p_.q_dtype)),
           DeviceBuffer(ckv_elements * dtype_size(p_.kv_dtype)), DeviceBuffer(kpe_elements * dtype_size(p_.kv_dtype)),
           DeviceBuffer(p_.out_elements() * dtype_size(p_.out_dtype))};
    // The reference's laws (mla.md): q_nope uniform in [0, 1) (torch.rand), the caches N(0, 1). Its
    // q_pe is zeros, which would leave kpe out of every logit: kbench's is N(0, 1).
    KBENCH_CUDA_CHECK(kernels::fill_uniform(c.q_nope.get(), p_.q_dtype, static_cast<int64_t>(p_.q_nope_elements()),
                                            tensor_seed(seed, i, kQNope), 0.0f, q_magnitude, stream));
    normal(c.q_pe, p_.q_dtype, p_.q_pe_elements(), tensor_seed(seed, i, kQPe), q_magnitude);
    normal(c.ckv, p_.kv_dtype, ckv_elements, tensor_seed(seed, i, kCkv), kv_magnitude);
    normal(c.kpe, p_.kv_dtype, kpe_elements, tensor_seed(seed, i, kKpe), kv_magnitude);
    KBENCH_CUDA_CHECK(kernels::poison(c.out.get(), static_cast<int64_t>(c.out.bytes()), stream));
    copies_.push_back(std::move(c));
  }
}

std::vector<CheckedOutput> MlaCase::outputs() const {
  // The reference's attention tolerance (rtol 0.2, atol 0.01); fp8 inputs 0.5 / 0.1 as decode's.
  const bool fp8_inputs = is_fp8(p_.q_dtype) || is_fp8(p_.kv_dtype);
  const Tolerance tolerance = fp8_inputs ? Tolerance{0.5, 0.1} : Tolerance{0.2, 0.01};
  return {{"out", copies_.front().out.get(), p_.out_dtype, p_.out_elements(), tolerance}};
}

std::vector<std::vector<float>> MlaCase::reference(cudaStream_t stream) {
  DeviceBuffer reference(p_.out_elements() * sizeof(float));
  KBENCH_CUDA_CHECK(kernels::launch_mla_reference(params(0), reference.as<float>(), stream));
  return {read_as_floats(reference.get(), DType::float32, p_.out_elements(), stream)};
}

}  // namespace kbench
