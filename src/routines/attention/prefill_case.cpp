#include "routines/attention/prefill_case.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/attention/attention_formulas.hpp"
#include "routines/device_tensors.hpp"

namespace kbench {
namespace {

// Tensor ids for tensor_seed.
enum TensorId { kQ = 32, kK = 33, kV = 34 };

int64_t average(const std::vector<int32_t>& lens) {
  const int64_t total = std::accumulate(lens.begin(), lens.end(), int64_t{0});
  return lens.empty() ? 0 : total / static_cast<int64_t>(lens.size());
}

}  // namespace

PrefillCase::PrefillCase(PrefillProblem problem) : p_(std::move(problem)) {
  if (is_fp8(p_.q_dtype)) q_scale_ = 1.0f / kFp8DataScale;
  if (is_fp8(p_.kv_dtype)) kv_scale_ = 1.0f / kFp8DataScale;
}

double PrefillCase::flops() const {
  return attention_flops({p_.num_qo_heads, p_.num_kv_heads, p_.head_dim_qk, p_.head_dim_vo, p_.causal}, p_.lens.q,
                         p_.lens.kv);
}

double PrefillCase::bytes() const {
  const AttentionSizes sizes{p_.num_qo_heads,
                             p_.num_kv_heads,
                             p_.head_dim_qk,
                             p_.head_dim_vo,
                             p_.causal,
                             static_cast<double>(dtype_size(p_.q_dtype)),
                             static_cast<double>(dtype_size(p_.kv_dtype)),
                             static_cast<double>(dtype_size(p_.out_dtype))};
  return attention_bytes(sizes, p_.lens.q, p_.lens.kv);
}

std::size_t PrefillCase::bytes_per_copy() const {
  return p_.q_elements() * dtype_size(p_.q_dtype) + (p_.k_elements() + p_.v_elements()) * dtype_size(p_.kv_dtype) +
         p_.out_elements() * dtype_size(p_.out_dtype);
}

std::size_t PrefillCase::reference_bytes() const { return 2 * p_.out_elements() * sizeof(float); }

std::vector<TensorInfo> PrefillCase::tensors() const {
  const int64_t b = p_.batch, hq = p_.num_qo_heads, hkv = p_.num_kv_heads;
  const int64_t dqk = p_.head_dim_qk, dvo = p_.head_dim_vo;
  const int64_t tokens_q = p_.qo_indptr.back();
  const TensorInfo q{"q", {tokens_q, hq, dqk}, {hq * dqk, dqk, 1}, p_.q_dtype};
  const TensorInfo out{"out", {tokens_q, hq, dvo}, {hq * dvo, dvo, 1}, p_.out_dtype};
  const TensorInfo qo_indptr{"qo_indptr", {b + 1}, {1}, DType::int32};
  const TensorInfo kv_indptr{"kv_indptr", {b + 1}, {1}, DType::int32};
  if (!p_.paged) {
    const int64_t tokens_kv = p_.kv_token_indptr.back();
    return {q,
            {"k", {tokens_kv, hkv, dqk}, {hkv * dqk, dqk, 1}, p_.kv_dtype},
            {"v", {tokens_kv, hkv, dvo}, {hkv * dvo, dvo, 1}, p_.kv_dtype},
            qo_indptr,
            kv_indptr,
            out};
  }
  const int64_t pages = p_.pages.total_pages, ps = p_.page_size, d = dqk;
  // Logically (pages, 2, H_kv, page_size, D), as the reference prints it; strides tell the layout.
  const std::vector<int64_t> stride = p_.layout == kernels::KvLayout::NHD
                                          ? std::vector<int64_t>{2 * ps * hkv * d, ps * hkv * d, d, hkv * d, 1}
                                          : std::vector<int64_t>{2 * hkv * ps * d, hkv * ps * d, ps * d, d, 1};
  return {q,
          {"kv_cache", {pages, 2, hkv, ps, d}, stride, p_.kv_dtype},
          {"block_tables", {b, p_.pages.pages_per_request}, {p_.pages.pages_per_request, 1}, DType::int32},
          qo_indptr,
          kv_indptr,
          {"kv_indices", {static_cast<int64_t>(p_.pages.indices.size())}, {1}, DType::int32},
          {"kv_last_page_len", {b}, {1}, DType::int32},
          out};
}

void PrefillCase::describe(const Log& log) const {
  log.vverbose(p_.s_qo == p_.s_kv ? "s_qo == s_kv, making actual_seq_lens_kv the same as actual_seq_lens_q"
                                  : "s_qo < s_kv, sampling actual_seq_lens_kv");
  log.verbose("Average actual qo seq len: " + std::to_string(average(p_.lens.q)));
  log.verbose("Average actual kv seq len: " + std::to_string(average(p_.lens.kv)));
  log.vverbose("actual_seq_lens_q.flatten() = " + lengths_text(p_.lens.q));
  log.vverbose("actual_seq_lens_kv.flatten() = " + lengths_text(p_.lens.kv));
  if (p_.paged) {
    log.vverbose("num_pages_per_seq = " + std::to_string(p_.pages.pages_per_request));
    log.vverbose("total_num_pages = " + std::to_string(p_.pages.total_pages));
  }
  log.vverbose("scale = " + python_float(1.0 / std::sqrt(static_cast<double>(p_.head_dim_qk))));
  if (is_fp8(p_.q_dtype)) log.vverbose("q_scale = " + python_float(q_scale_));
  if (is_fp8(p_.kv_dtype)) log.vverbose("k_scale = v_scale = " + python_float(kv_scale_));
}

std::vector<std::pair<std::string, std::string>> PrefillCase::result_columns() const {
  // The reference's prefill rows report the average query length.
  return {{"avg_actual_seq_len", std::to_string(average(p_.lens.q))}};
}

float PrefillCase::sm_scale() const {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(p_.head_dim_qk)));
}

kernels::PrefillParams PrefillCase::params(int copy_index) const {
  static const Copy kUnallocated;
  const Copy& copy = copy_index == kNoCopy ? kUnallocated : copies_.at(static_cast<std::size_t>(copy_index));
  kernels::PrefillParams k;
  k.q = copy.q.get();
  k.q_dtype = p_.q_dtype;
  k.q_scale = q_scale_;
  k.qo_indptr = qo_indptr_.as<int32_t>();
  k.out = copy.out.get();
  k.out_dtype = p_.out_dtype;
  k.paged = p_.paged;
  if (p_.paged) {
    k.pages.data = copy.k.get();
    k.pages.layout = p_.layout;
    k.pages.page_size = p_.page_size;
    k.pages.indptr = kv_indptr_.as<int32_t>();
    k.pages.indices = kv_indices_.as<int32_t>();
    k.pages.last_page_len = last_page_len_.as<int32_t>();
  } else {
    k.ragged.k = copy.k.get();
    k.ragged.v = copy.v.get();
    k.ragged.indptr = kv_indptr_.as<int32_t>();
  }
  k.kv_dtype = p_.kv_dtype;
  k.k_scale = kv_scale_;
  k.v_scale = kv_scale_;
  k.batch = p_.batch;
  k.num_qo_heads = p_.num_qo_heads;
  k.num_kv_heads = p_.num_kv_heads;
  k.head_dim_qk = p_.head_dim_qk;
  k.head_dim_vo = p_.head_dim_vo;
  k.causal = p_.causal;
  k.sm_scale = sm_scale();
  k.enable_pdl = p_.enable_pdl;
  return k;
}

void PrefillCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  qo_indptr_ = upload(p_.qo_indptr, stream);
  if (p_.paged) {
    kv_indptr_ = upload(p_.pages.indptr, stream);
    kv_indices_ = upload(p_.pages.indices, stream);
    last_page_len_ = upload(p_.pages.last_page_len, stream);
    block_table_ = upload(p_.pages.block_table, stream);
  } else {
    kv_indptr_ = upload(p_.kv_token_indptr, stream);
  }
  const float q_std = is_fp8(p_.q_dtype) ? kFp8DataScale : 1.0f;
  const float kv_std = is_fp8(p_.kv_dtype) ? kFp8DataScale : 1.0f;
  auto filled = [&](std::size_t elements, DType dtype, uint64_t tensor_seed_value, float stddev) {
    DeviceBuffer buffer(elements * dtype_size(dtype));
    KBENCH_CUDA_CHECK(kernels::fill_normal(buffer.get(), dtype, static_cast<int64_t>(elements), tensor_seed_value, 0.0f,
                                           stddev, stream));
    return buffer;
  };
  copies_.clear();
  for (int i = 0; i < copies; ++i) {
    Copy c;
    c.q = filled(p_.q_elements(), p_.q_dtype, tensor_seed(seed, i, kQ), q_std);
    c.k = filled(p_.k_elements(), p_.kv_dtype, tensor_seed(seed, i, kK), kv_std);
    if (!p_.paged) c.v = filled(p_.v_elements(), p_.kv_dtype, tensor_seed(seed, i, kV), kv_std);
    c.out = DeviceBuffer(p_.out_elements() * dtype_size(p_.out_dtype));
    KBENCH_CUDA_CHECK(kernels::poison(c.out.get(), static_cast<int64_t>(c.out.bytes()), stream));
    copies_.push_back(std::move(c));
  }
}

std::vector<CheckedOutput> PrefillCase::outputs() const {
  // compat.md: attention rtol 0.2, atol 0.01; fp8 inputs 0.5, 0.1.
  const bool fp8_inputs = is_fp8(p_.q_dtype) || is_fp8(p_.kv_dtype);
  const Tolerance tolerance = fp8_inputs ? Tolerance{0.5, 0.1} : Tolerance{0.2, 0.01};
  return {{"out", copies_.front().out.get(), p_.out_dtype, p_.out_elements(), tolerance}};
}

std::vector<std::vector<float>> PrefillCase::reference(cudaStream_t stream) {
  DeviceBuffer reference(p_.out_elements() * sizeof(float));
  KBENCH_CUDA_CHECK(kernels::launch_prefill_reference(params(0), reference.as<float>(), stream));
  KBENCH_CUDA_CHECK(cudaGetLastError());
  return {read_as_floats(reference.get(), DType::float32, p_.out_elements(), stream)};
}

}  // namespace kbench
