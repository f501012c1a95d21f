// The flashinfer backend's MLA API: mla_unsupported and the Mla class. No FlashInfer header: the
// kernels live in mla_fa2_bf16.cu and mla_fa3_bf16.cu.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>
#include <string>

#include "backends/flashinfer/fi_internal.hpp"
#include "backends/flashinfer/flashinfer_mla.hpp"

namespace kbench::backends::flashinfer {
namespace {

// MLAPlan's fixed capacity (max_total_num_works in scheduler.cuh): more work items would overrun its
// staging arrays.
constexpr int64_t kMaxWorks = 16384;
constexpr int64_t kCtaTileQ = 64;

// An upper bound on MLAPlan's work items: one per (request, 64-row tile of packed query rows) plus
// at most one extra per cluster from splitting the KV (its kv_len_limit is at least the total KV
// over the clusters); one cluster per SM at most.
int64_t mla_work_bound(const MlaShape& s, int num_sms) {
  const int64_t tiles_per_request = (int64_t{s.s_qo} * s.num_heads + kCtaTileQ - 1) / kCtaTileQ;
  return int64_t{s.batch} * tiles_per_request + num_sms;
}

}  // namespace

std::optional<std::string> mla_unsupported(MlaPath path, const MlaShape& s) {
  if (s.q_dtype != DType::bfloat16 || s.kv_dtype != DType::bfloat16 || s.out_dtype != DType::bfloat16) {
    return "kbench builds FlashInfer's MLA kernels for bfloat16 q, kv and output only (its fp8-KV path is not "
           "instantiated; the reference runs fa2 and fa3 for bfloat16 only too)";
  }
  if (s.head_dim_ckv != 512 || s.head_dim_kpe != 64) {
    return "head dims " + std::to_string(s.head_dim_ckv) + "/" + std::to_string(s.head_dim_kpe) +
           " are not instantiated (kbench builds FlashInfer's MLA kernels for 512/64, DeepSeek's)";
  }
  if (s.batch <= 0 || s.num_heads <= 0 || s.s_qo <= 0 || s.page_size <= 0) return "empty case";
  if (static_cast<int>(s.qo_indptr.size()) != s.batch + 1 || static_cast<int>(s.kv_indptr.size()) != s.batch + 1 ||
      static_cast<int>(s.kv_len.size()) != s.batch) {
    return "indptr / kv_len sizes do not match the batch";
  }
  if (s.qo_indptr[0] != 0 || s.kv_indptr[0] != 0) return "indptr arrays must start at 0";
  for (int b = 0; b < s.batch; ++b) {
    if (s.qo_indptr[b + 1] - s.qo_indptr[b] != s.s_qo) return "every request needs s_qo query rows";
    if (s.kv_len[b] < s.s_qo) {
      return "a request with fewer keys than query rows (FlashInfer's bottom-right causal mask leaves rows without "
             "keys)";
    }
    if (s.kv_indptr[b + 1] - s.kv_indptr[b] != (s.kv_len[b] + s.page_size - 1) / s.page_size) {
      return "kv_len does not match the page table";
    }
  }
  // The kernels index cache rows as kv_indptr * page_size + token in uint32.
  if (int64_t{s.kv_indptr[s.batch]} * s.page_size > std::numeric_limits<uint32_t>::max() ||
      int64_t{s.num_pages} * s.page_size > std::numeric_limits<uint32_t>::max()) {
    return "over 2^32 cache tokens (FlashInfer's MLA kernels index them in 32 bits)";
  }
  if (auto reason = detail::device_unsupported(/*need_sm90=*/path == MlaPath::fa3)) return reason;
  int device = 0, num_sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return "no CUDA device";
  }
  if (mla_work_bound(s, num_sms) > kMaxWorks) {
    return "over " + std::to_string(kMaxWorks) + " work items (FlashInfer's MLAPlan holds at most that many)";
  }
  return std::nullopt;
}

Mla::Mla(MlaPath path, const MlaShape& shape, cudaStream_t stream) {
  if (auto reason = mla_unsupported(path, shape)) throw std::runtime_error("flashinfer MLA: " + *reason);
  impl_ = path == MlaPath::fa3 ? detail::make_mla_fa3_bf16(shape, stream) : detail::make_mla_fa2_bf16(shape, stream);
}
Mla::~Mla() = default;
Mla::Mla(Mla&&) noexcept = default;
Mla& Mla::operator=(Mla&&) noexcept = default;

cudaError_t Mla::run(const MlaTensors& tensors, cudaStream_t stream) const { return impl_->run(tensors, stream); }
const std::string& Mla::plan_summary() const { return impl_->summary; }

}  // namespace kbench::backends::flashinfer
