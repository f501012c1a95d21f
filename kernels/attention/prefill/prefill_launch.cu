// launch_prefill, prefill_supported and prefill_kernels_available: the checks every prefill kernel
// shares, then the kernel's own (prefill_internal.hpp).
//
// Shared checks. Shape (prefill_supported; no pointer is looked at, so callers can ask before any
// buffer exists): batch >= 0, num_qo_heads a multiple of num_kv_heads >= 1, head dims 64/64,
// 128/128, 256/256 or 192/128 (paged: equal, page_size >= 1), q and KV bfloat16, float16, fp8_e4m3
// or fp8_e5m2, out bfloat16 or float16, finite scales, sizes that fit the kernels' 32-bit counts.
// Buffers (launch_prefill, when batch > 0): every pointer the KV kind uses non-null, tensors aligned
// to 16 bytes (vector and TMA loads), index arrays to 4.
//
// prefill_supported also asks whether the kernel has machine code for the current device;
// launch_prefill does not (it runs in timing loops and under graph capture), so a kernel without an
// image fails there with the launch's own error (cudaErrorNoKernelImageForDevice) rather than
// cudaErrorInvalidValue.
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/attention/prefill/prefill_internal.hpp"
#include "kernels/common/kernel_image.hpp"

namespace kbench::kernels {

namespace {

bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

bool data_dtype(DType t) {
  return t == DType::bfloat16 || t == DType::float16 || t == DType::fp8_e4m3 || t == DType::fp8_e5m2;
}

bool head_dims_valid(int qk, int vo) {
  return (qk == vo && (qk == 64 || qk == 128 || qk == 256)) || (qk == 192 && vo == 128);
}

bool common_shape_valid(const PrefillParams& p) {
  if (p.batch < 0 || p.num_qo_heads < 1 || p.num_kv_heads < 1 || p.num_qo_heads % p.num_kv_heads != 0) return false;
  if (!head_dims_valid(p.head_dim_qk, p.head_dim_vo)) return false;
  if (!data_dtype(p.q_dtype) || !data_dtype(p.kv_dtype)) return false;
  if (p.out_dtype != DType::bfloat16 && p.out_dtype != DType::float16) return false;
  if (!std::isfinite(p.sm_scale) || !std::isfinite(p.q_scale) || !std::isfinite(p.k_scale) ||
      !std::isfinite(p.v_scale)) {
    return false;
  }
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (static_cast<int64_t>(p.batch) * p.num_qo_heads > kMax) return false;
  if (p.paged) {
    if (p.head_dim_qk != p.head_dim_vo || p.pages.page_size < 1) return false;
    if (p.pages.layout != KvLayout::NHD && p.pages.layout != KvLayout::HND) return false;
    if (static_cast<int64_t>(p.pages.page_size) * p.num_kv_heads * p.head_dim_qk > kMax) return false;
  }
  return true;
}

bool buffers_valid(const PrefillParams& p) {
  if (p.batch == 0) return true;  // nothing is read or written
  if (p.q == nullptr || p.out == nullptr || p.qo_indptr == nullptr) return false;
  if (!aligned(p.q, 16) || !aligned(p.out, 16) || !aligned(p.qo_indptr, 4)) return false;
  if (p.paged) {
    const PagedKvView& kv = p.pages;
    return kv.data != nullptr && kv.indptr != nullptr && kv.indices != nullptr && kv.last_page_len != nullptr &&
           aligned(kv.data, 16) && aligned(kv.indptr, 4) && aligned(kv.indices, 4) && aligned(kv.last_page_len, 4);
  }
  const RaggedKvView& kv = p.ragged;
  return kv.k != nullptr && kv.v != nullptr && kv.indptr != nullptr && aligned(kv.k, 16) && aligned(kv.v, 16) &&
         aligned(kv.indptr, 4);
}

bool kernel_takes(PrefillKernel kernel, const PrefillParams& params) {
  if (!common_shape_valid(params)) return false;
  switch (kernel) {
    case PrefillKernel::fa2: return prefill_detail::fa2_supported(params);
    case PrefillKernel::fa3: return prefill_detail::fa3_supported(params);
  }
  return false;
}

}  // namespace

bool prefill_supported(PrefillKernel kernel, const PrefillParams& params) {
  return kernel_takes(kernel, params) && prefill_kernels_available(kernel) == cudaSuccess;
}

cudaError_t launch_prefill(PrefillKernel kernel, const PrefillParams& params, const PrefillWorkspace& workspace,
                           cudaStream_t stream) {
  if (!kernel_takes(kernel, params) || !buffers_valid(params)) return cudaErrorInvalidValue;
  if (workspace.num_items < 0 || (workspace.num_items > 0 && workspace.items == nullptr) ||
      !aligned(workspace.items, alignof(PrefillWorkItem))) {
    return cudaErrorInvalidValue;
  }
  // Only empty requests (q_len 0) make an empty plan: no row to write.
  if (params.batch == 0 || workspace.num_items == 0) return cudaSuccess;
  switch (kernel) {
    case PrefillKernel::fa2: return prefill_detail::launch_fa2(params, workspace, stream);
    case PrefillKernel::fa3: return prefill_detail::launch_fa3(params, workspace, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t prefill_kernels_available(PrefillKernel kernel) {
  switch (kernel) {
    case PrefillKernel::fa2: return kernel_image_status(prefill_detail::fa2_available());
    case PrefillKernel::fa3: return kernel_image_status(prefill_detail::fa3_available());
  }
  return cudaErrorInvalidValue;
}

}  // namespace kbench::kernels
