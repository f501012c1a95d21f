// The cuDNN backend of BatchPrefillWithRaggedKVCacheWrapper and BatchPrefillWithPagedKVCacheWrapper:
// cuDNN's scaled-dot-product attention (SDPA) forward on ragged Q/O (ragged offsets + padding mask),
// with ragged K/V or a paged KV cache (page tables), causal masks aligned bottom-right.
//
// No cuDNN header leaks from here: callers build without cuDNN's include paths. Built only where
// cuDNN is found (target kbench_cudnn).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kbench/dtype.hpp"
#include "kernels/attention/kv_layout.hpp"

namespace kbench::backends {

// One prefill problem, fixed when the graph is built (the lengths too: the backend keeps its own
// device copies of the sequence lengths and ragged offsets it derives from them). Data pointers
// come later, with run().
//   q:   [qo_indptr[batch]][num_qo_heads][head_dim_qk]     contiguous, token-major (ragged)
//   out: [qo_indptr[batch]][num_qo_heads][head_dim_vo]     contiguous
//   ragged K/V: k [kv_indptr[batch]][num_kv_heads][head_dim_qk], v [...][head_dim_vo], contiguous
//   paged:      one cache of num_pages pages, K and V interleaved per page as `layout` says
//               (HND cache[page][2][kv_head][slot][dim], NHD cache[page][2][slot][kv_head][dim]),
//               and a dense block table int32 [batch][max_pages_per_request] (device, from run()).
struct CudnnPrefillShape {
  int batch = 0;
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim_qk = 128;
  int head_dim_vo = 128;
  int max_q_len = 0;   // --s_qo: at least every q_len
  int max_kv_len = 0;  // --s_kv: at least every kv_len
  std::vector<int32_t> qo_indptr;  // host, [batch + 1], token offsets
  std::vector<int32_t> kv_indptr;  // host, [batch + 1], token offsets (kv_len_b = difference)
  bool paged = false;
  int page_size = 16;              // paged only
  int num_pages = 0;               // paged only
  int max_pages_per_request = 0;   // paged only
  kernels::KvLayout layout = kernels::KvLayout::NHD;  // paged only
  bool causal = false;
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  float sm_scale = 0.0f;
};

// Why cuDNN cannot run this shape on the current device (library too old, no
// device, dtype, head dims, ... or the frontend's own validation message), or nullopt when it can.
// Builds the graph and asks cuDNN's engines with a temporary handle (about 6-8 ms on an H100); the
// constructor can still fail when the plan is built.
[[nodiscard]] std::optional<std::string> cudnn_prefill_unsupported(const CudnnPrefillShape& shape);

// Device data of one call. Ragged: k and v; paged: kv_cache and block_table.
struct CudnnPrefillData {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* kv_cache = nullptr;
  const int32_t* block_table = nullptr;
  void* out = nullptr;
};

// Builds and plans the cuDNN graph once (outside timing) and owns the handle, the workspace and the
// device copies of the lengths and offsets.
class CudnnPrefill {
 public:
  // Throws std::runtime_error with cuDNN's message (unsupported, no engine, ...) and
  // kbench::CudaError for CUDA failures.
  explicit CudnnPrefill(const CudnnPrefillShape& shape);
  ~CudnnPrefill();
  CudnnPrefill(CudnnPrefill&&) noexcept;
  CudnnPrefill& operator=(CudnnPrefill&&) noexcept;
  CudnnPrefill(const CudnnPrefill&) = delete;
  CudnnPrefill& operator=(const CudnnPrefill&) = delete;

  // Enqueues the attention on `stream`: no allocation, no host synchronisation, so it can be
  // captured in a CUDA graph. Run it once eagerly before the first capture (cuDNN loads kernels
  // lazily). Throws std::runtime_error where cuDNN refuses the launch.
  void run(const CudnnPrefillData& data, cudaStream_t stream);

  [[nodiscard]] const CudnnPrefillShape& shape() const noexcept;
  [[nodiscard]] std::size_t workspace_bytes() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kbench::backends
