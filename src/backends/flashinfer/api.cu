// The flashinfer backend's API: the *_unsupported checks, the Decode and Prefill classes and the
// tensor-core decode (FlashInfer's fa2 paged prefill with one query per request). No FlashInfer
// header: the kernels live in the other translation units.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends/flashinfer/fi_internal.hpp"
#include "backends/flashinfer/flashinfer_decode.hpp"
#include "backends/flashinfer/flashinfer_prefill.hpp"

namespace kbench::backends::flashinfer {
namespace {

// An empty kernel built for the same architectures as the norm, decode, fa2 and sampling kernels: if
// it has no image for the current device, neither have they.
__global__ void probe_kernel() {}

}  // namespace

namespace detail {

std::optional<std::string> device_unsupported(bool need_sm90) {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    return "no CUDA device";
  }
  if (need_sm90 && (major != 9 || minor != 0)) {
    return "FlashInfer's fa3 kernels are built for sm_90a only, not compute capability " + std::to_string(major) +
           "." + std::to_string(minor);
  }
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, probe_kernel) != cudaSuccess) {
    cudaGetLastError();  // clear the (non-sticky) error the failed query recorded
    return "kbench_flashinfer was not built for compute capability " + std::to_string(major) + "." +
           std::to_string(minor) + " (CMAKE_CUDA_ARCHITECTURES)";
  }
  return std::nullopt;
}

}  // namespace detail

namespace {

std::optional<std::string> dtypes_unsupported(DType q, DType kv, DType out) {
  if (is_fp8(q) || is_fp8(kv) || is_fp8(out)) return "fp8 attention is out of scope for the flashinfer backend";
  if (q != kv || q != out) return "the flashinfer backend instantiates q = kv = out dtypes only";
  if (q != DType::bfloat16 && q != DType::float16) {
    return "the flashinfer backend instantiates bfloat16 and float16 only, not " + std::string(dtype_name(q));
  }
  return std::nullopt;
}

std::optional<std::string> heads_unsupported(int num_qo_heads, int num_kv_heads) {
  if (num_qo_heads <= 0 || num_kv_heads <= 0) return "empty head count";
  if (num_qo_heads % num_kv_heads != 0) return "num_qo_heads is not a multiple of num_kv_heads";
  return std::nullopt;
}

// A paged page table: indptr monotone from 0 within num_pages entries, last_page_len in 1..page_size.
// Empty requests (no pages) are rejected: kbench never makes them and their kv_len is 0.
std::optional<std::string> page_table_unsupported(int batch, int page_size, const std::vector<int32_t>& indptr,
                                                  const std::vector<int32_t>& last_page_len) {
  if (page_size <= 0) return "page_size must be positive";
  if (static_cast<int>(indptr.size()) != batch + 1 || static_cast<int>(last_page_len.size()) != batch) {
    return "page table sizes do not match the batch";
  }
  if (indptr[0] != 0) return "indptr[0] must be 0";
  for (int b = 0; b < batch; ++b) {
    if (indptr[b + 1] <= indptr[b]) return "every request needs at least one page";
    if (last_page_len[b] < 1 || last_page_len[b] > page_size) return "last_page_len outside 1..page_size";
  }
  return std::nullopt;
}

bool is_bf16(DType t) { return t == DType::bfloat16; }

}  // namespace

namespace detail {
namespace {

// FlashInfer's BatchDecodeWithPagedKVCacheWrapper(use_tensor_cores=True): the fa2 paged prefill
// kernel, planned with qo_indptr = 0, 1, ..., batch and causal off.
class DecodeTensorCores final : public DecodeImpl {
 public:
  DecodeTensorCores(const DecodeShape& s, cudaStream_t stream) {
    PrefillShape p;
    p.batch = s.batch;
    p.num_qo_heads = s.num_qo_heads;
    p.num_kv_heads = s.num_kv_heads;
    p.head_dim_qk = p.head_dim_vo = s.head_dim;
    p.paged = true;
    p.page_size = s.page_size;
    p.num_pages = s.num_pages;
    p.layout = s.layout;
    p.causal = false;
    p.q_dtype = s.q_dtype;
    p.kv_dtype = s.kv_dtype;
    p.out_dtype = s.out_dtype;
    p.sm_scale = s.sm_scale;
    p.enable_pdl = s.enable_pdl;
    p.qo_indptr.resize(s.batch + 1);
    for (int b = 0; b <= s.batch; ++b) p.qo_indptr[b] = b;
    p.kv_indptr = s.indptr;
    p.last_page_len = s.last_page_len;
    p.kv_lens.resize(s.batch);
    for (int b = 0; b < s.batch; ++b) {
      p.kv_lens[b] = (s.indptr[b + 1] - s.indptr[b] - 1) * s.page_size + s.last_page_len[b];
    }
    qo_indptr_ = DeviceBuffer(p.qo_indptr.size() * sizeof(int32_t));
    KBENCH_CUDA_CHECK(cudaMemcpy(qo_indptr_.get(), p.qo_indptr.data(), qo_indptr_.bytes(), cudaMemcpyHostToDevice));
    prefill_ = is_bf16(s.q_dtype) ? make_prefill_fa2_paged_bf16(p, stream) : make_prefill_fa2_paged_fp16(p, stream);
    summary = "tensor_cores (" + prefill_->summary + ")";
  }

  cudaError_t run(const DecodeTensors& t, cudaStream_t stream) const override {
    PrefillTensors p;
    p.q = t.q;
    p.kv_cache = t.kv_cache;
    p.qo_indptr = qo_indptr_.as<const int32_t>();
    p.kv_indptr = t.indptr;
    p.kv_indices = t.indices;
    p.last_page_len = t.last_page_len;
    p.out = t.out;
    return prefill_->run(p, stream);
  }

 private:
  DeviceBuffer qo_indptr_;
  std::unique_ptr<PrefillImpl> prefill_;
};

}  // namespace
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Decode

std::optional<std::string> decode_unsupported(DecodePath path, const DecodeShape& s) {
  if (auto r = dtypes_unsupported(s.q_dtype, s.kv_dtype, s.out_dtype)) return r;
  if (s.head_dim != 64 && s.head_dim != 128 && s.head_dim != 256) {
    return "head_dim " + std::to_string(s.head_dim) + " is not instantiated (64, 128, 256)";
  }
  if (auto r = heads_unsupported(s.num_qo_heads, s.num_kv_heads)) return r;
  if (s.batch <= 0) return "empty batch";
  if (path == DecodePath::cuda_cores) {
    const int group = s.num_qo_heads / s.num_kv_heads;
    if (group != 1 && group != 2 && group != 3 && group != 4 && group != 6 && group != 8 && group != 16) {
      return "GQA group size " + std::to_string(group) +
             " is not in FlashInfer's DISPATCH_GQA_GROUP_SIZE (1, 2, 3, 4, 6, 8, 16)";
    }
  }
  if (auto r = page_table_unsupported(s.batch, s.page_size, s.indptr, s.last_page_len)) return r;
  return detail::device_unsupported(/*need_sm90=*/false);
}

Decode::Decode(DecodePath path, const DecodeShape& shape, cudaStream_t stream) {
  if (auto reason = decode_unsupported(path, shape)) throw std::runtime_error("flashinfer decode: " + *reason);
  if (path == DecodePath::tensor_cores) {
    impl_ = std::make_unique<detail::DecodeTensorCores>(shape, stream);
  } else {
    impl_ = is_bf16(shape.q_dtype) ? detail::make_decode_cuda_cores_bf16(shape, stream)
                                   : detail::make_decode_cuda_cores_fp16(shape, stream);
  }
}
Decode::~Decode() = default;
Decode::Decode(Decode&&) noexcept = default;
Decode& Decode::operator=(Decode&&) noexcept = default;

cudaError_t Decode::run(const DecodeTensors& tensors, cudaStream_t stream) const {
  return impl_->run(tensors, stream);
}
const std::string& Decode::plan_summary() const { return impl_->summary; }

// ---------------------------------------------------------------------------------------------
// Prefill

std::optional<std::string> prefill_unsupported(PrefillPath path, const PrefillShape& s) {
  if (auto r = dtypes_unsupported(s.q_dtype, s.kv_dtype, s.out_dtype)) return r;
  if (auto r = heads_unsupported(s.num_qo_heads, s.num_kv_heads)) return r;
  const int qk = s.head_dim_qk, vo = s.head_dim_vo;
  const bool square = qk == vo && (qk == 64 || qk == 128 || qk == 256);
  if (path == PrefillPath::fa2 && !square) {
    return "fa2 head dims " + std::to_string(qk) + "/" + std::to_string(vo) +
           " are not instantiated (64/64, 128/128, 256/256)";
  }
  if (path == PrefillPath::fa3) {
    if (s.paged && !square) {
      return "fa3 paged head dims " + std::to_string(qk) + "/" + std::to_string(vo) +
             " are not instantiated (64/64, 128/128, 256/256)";
    }
    if (!s.paged && !square && !(qk == 192 && vo == 128)) {
      return "fa3 ragged head dims " + std::to_string(qk) + "/" + std::to_string(vo) +
             " are not instantiated (64/64, 128/128, 256/256, 192/128)";
    }
  }
  if (s.batch <= 0) return "empty batch";
  if (static_cast<int>(s.qo_indptr.size()) != s.batch + 1 || static_cast<int>(s.kv_indptr.size()) != s.batch + 1 ||
      static_cast<int>(s.kv_lens.size()) != s.batch) {
    return "indptr / kv_lens sizes do not match the batch";
  }
  if (s.qo_indptr[0] != 0 || s.kv_indptr[0] != 0) return "indptr arrays must start at 0";
  for (int b = 0; b < s.batch; ++b) {
    const int qo_len = s.qo_indptr[b + 1] - s.qo_indptr[b];
    if (qo_len < 0 || s.kv_lens[b] < 0) return "negative query or kv length";
    if (s.causal && qo_len > s.kv_lens[b]) {
      return "causal with more queries than keys in a request (FlashInfer's bottom-right causal mask "
             "leaves rows without keys)";
    }
    if (!s.paged && s.kv_indptr[b + 1] - s.kv_indptr[b] != s.kv_lens[b]) {
      return "ragged kv_indptr does not match kv_lens";
    }
  }
  if (s.paged) {
    if (auto r = page_table_unsupported(s.batch, s.page_size, s.kv_indptr, s.last_page_len)) return r;
    for (int b = 0; b < s.batch; ++b) {
      if ((s.kv_indptr[b + 1] - s.kv_indptr[b] - 1) * s.page_size + s.last_page_len[b] != s.kv_lens[b]) {
        return "paged kv_lens do not match the page table";
      }
    }
  }
  if (path == PrefillPath::fa3) {
    // PrefillSM90Plan switches to same_schedule_for_all_heads above 4096 query tiles per head; that
    // scheduler variant is not instantiated.
    const int64_t cta_tile_q = vo == 64 ? 192 : 128;
    const int64_t total_q = s.qo_indptr[s.batch];
    if ((total_q + cta_tile_q - 1) / cta_tile_q + s.batch - 1 > 4096) {
      return "more than 4096 query tiles per head: FlashInfer's fa3 plan would pick "
             "same_schedule_for_all_heads, which is not instantiated";
    }
  }
  return detail::device_unsupported(/*need_sm90=*/path == PrefillPath::fa3);
}

Prefill::Prefill(PrefillPath path, const PrefillShape& shape, cudaStream_t stream) {
  if (auto reason = prefill_unsupported(path, shape)) throw std::runtime_error("flashinfer prefill: " + *reason);
  const bool bf16 = is_bf16(shape.q_dtype);
  if (path == PrefillPath::fa3) {
    impl_ = bf16 ? detail::make_prefill_fa3_bf16(shape, stream) : detail::make_prefill_fa3_fp16(shape, stream);
  } else if (shape.paged) {
    impl_ = bf16 ? detail::make_prefill_fa2_paged_bf16(shape, stream)
                 : detail::make_prefill_fa2_paged_fp16(shape, stream);
  } else {
    impl_ = bf16 ? detail::make_prefill_fa2_ragged_bf16(shape, stream)
                 : detail::make_prefill_fa2_ragged_fp16(shape, stream);
  }
}
Prefill::~Prefill() = default;
Prefill::Prefill(Prefill&&) noexcept = default;
Prefill& Prefill::operator=(Prefill&&) noexcept = default;

cudaError_t Prefill::run(const PrefillTensors& tensors, cudaStream_t stream) const {
  return impl_->run(tensors, stream);
}
const std::string& Prefill::plan_summary() const { return impl_->summary; }

}  // namespace kbench::backends::flashinfer
