// The cuDNN backend of BatchDecodeWithPagedKVCacheWrapper: cuDNN's scaled-dot-product attention
// (SDPA) forward over a paged KV cache, through its page tables (cudnn_frontend graph API: sdpa with
// paged K/V tables, padding mask with seq_len_q = 1 and seq_len_kv per request).
//
// No cuDNN header leaks from here: callers build without cuDNN's include paths. Built only where
// cuDNN is found (target kbench_cudnn); elsewhere the cudnn backends are absent with one reason.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kbench/dtype.hpp"
#include "kernels/attention/decode/decode.hpp"

namespace kbench::backends {

// One decode problem, fixed when the graph is built. Pointers come later, with run().
//   q, out:      [batch][num_qo_heads][head_dim], contiguous
//   kv cache:    one buffer of num_pages pages, K and V interleaved per page:
//                HND cache[page][2][kv_head][slot][dim], NHD cache[page][2][slot][kv_head][dim]
//   block table: int32 [batch][max_pages_per_request], dense (unused tail entries must still be
//                valid page indices, e.g. 0: cuDNN does not read past seq_len_kv, but keep them sane)
//   seq_len_kv:  int32 [batch], 0..max_pages_per_request * page_size
struct CudnnPagedDecodeShape {
  int batch = 0;
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 128;
  int page_size = 16;
  int num_pages = 0;
  int max_pages_per_request = 0;
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  kernels::KvLayout layout = kernels::KvLayout::HND;
  float sm_scale = 0.0f;
};

// Why cuDNN cannot run this shape on the current device (library too
// old, no device, dtype, head_dim, GQA ratio, ... or the frontend's own validation message), or
// nullopt when it can. Cheap: no handle, no plan; the constructor can still fail where cuDNN finds
// no engine for the graph (it then throws with cuDNN's message).
[[nodiscard]] std::optional<std::string> cudnn_paged_decode_unsupported(const CudnnPagedDecodeShape& shape);

// "cuDNN 9.14.0 (built against 9.14.0), cudnn_frontend 1.32.0".
[[nodiscard]] std::string cudnn_version_string();

// Builds and plans the cuDNN graph once (outside timing) and owns the cuDNN handle and workspace.
class CudnnPagedDecode {
 public:
  // Throws std::runtime_error with cuDNN's message (unsupported shape, no engine, ...) and
  // kbench::CudaError for CUDA failures.
  explicit CudnnPagedDecode(const CudnnPagedDecodeShape& shape);
  ~CudnnPagedDecode();
  CudnnPagedDecode(CudnnPagedDecode&&) noexcept;
  CudnnPagedDecode& operator=(CudnnPagedDecode&&) noexcept;
  CudnnPagedDecode(const CudnnPagedDecode&) = delete;
  CudnnPagedDecode& operator=(const CudnnPagedDecode&) = delete;

  // Enqueues the attention on `stream`: cudnnSetStream + execute, nothing else (no allocation, no
  // host synchronisation), so it can be captured in a CUDA graph. Run it once eagerly before the
  // first capture (cuDNN loads kernels lazily on first use). seq_len_q_ones: int32 [batch] of 1s,
  // or null to use the object's own. Throws std::runtime_error where cuDNN refuses the launch.
  void run(const void* q, const void* kv_cache, const int32_t* block_table, const int32_t* seq_len_kv,
           const int32_t* seq_len_q_ones, void* out, cudaStream_t stream);

  [[nodiscard]] const CudnnPagedDecodeShape& shape() const noexcept;
  [[nodiscard]] std::size_t workspace_bytes() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kbench::backends
