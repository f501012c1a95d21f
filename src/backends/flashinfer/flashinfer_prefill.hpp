// FlashInfer's own batch prefill attention (flashinfer-python 0.7.2.post1, header-only kernels) as
// the `flashinfer` yardstick backend:
//   fa2: PrefillPlan + BatchPrefillWith{Ragged,Paged}KVCacheDispatched (flashinfer/attention/prefill.cuh)
//   fa3: PrefillSM90Plan + BatchPrefillWith{Ragged,Paged}KVCacheDispatched
//        (flashinfer/attention/hopper/prefill_sm90.cuh); sm_90 only.
// No FlashInfer or CUTLASS header is included here.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kbench/dtype.hpp"
#include "kernels/attention/kv_layout.hpp"

namespace kbench::backends::flashinfer {

enum class PrefillPath { fa2, fa3 };

// The case, as planned on the host. Request b has qo_len = qo_indptr[b+1] - qo_indptr[b] query
// tokens and kv_lens[b] key/value tokens.
//   ragged: K/V tokens of request b are rows kv_indptr[b] .. kv_indptr[b+1] of k and v
//           (kv_indptr[b+1] - kv_indptr[b] == kv_lens[b]).
//   paged:  kv_indptr holds page offsets; the cache is kbench's interleaved one (see
//           flashinfer_decode.hpp: HND cache[page][2][H][P][D], NHD cache[page][2][P][H][D]) and
//           kv_lens[b] == (pages - 1) * page_size + last_page_len[b]; needs head_dim_qk == head_dim_vo.
// causal: query i of a request sees keys j <= i + kv_len - qo_len (bottom-right aligned, FlashInfer's
// causal). No soft cap, sliding window, rope or ALiBi; softmax scale sm_scale.
struct PrefillShape {
  int batch = 0;
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim_qk = 0;
  int head_dim_vo = 0;
  bool paged = false;
  int page_size = 0;  // paged
  int num_pages = 0;  // paged
  kernels::KvLayout layout = kernels::KvLayout::NHD;  // paged
  bool causal = false;
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  float sm_scale = 0.f;
  std::vector<int32_t> qo_indptr;      // host, batch + 1 token offsets
  std::vector<int32_t> kv_indptr;      // host, batch + 1: ragged token offsets, or paged page offsets
  std::vector<int32_t> kv_lens;        // host, batch: kv length in tokens
  std::vector<int32_t> last_page_len;  // host, batch: paged only, 1..page_size
  // Programmatic dependent launch on FlashInfer's launches (fa2; FlashInfer's fa3 launchers take the
  // flag but launch without it). FlashInfer's Python run() turns it on by default on sm_90 and newer.
  bool enable_pdl = false;
};

// Device pointers for one run; the index arrays must hold the values the object was planned with.
struct PrefillTensors {
  const void* q = nullptr;  // [tokens_q][num_qo_heads][head_dim_qk]
  const void* k = nullptr;  // ragged: [tokens_kv][num_kv_heads][head_dim_qk]
  const void* v = nullptr;  // ragged: [tokens_kv][num_kv_heads][head_dim_vo]
  const void* kv_cache = nullptr;  // paged: the interleaved cache (head_dim_qk == head_dim_vo)
  const int32_t* qo_indptr = nullptr;      // [batch + 1]
  const int32_t* kv_indptr = nullptr;      // [batch + 1]
  const int32_t* kv_indices = nullptr;     // paged: page ids
  const int32_t* last_page_len = nullptr;  // paged: [batch]
  void* out = nullptr;  // [tokens_q][num_qo_heads][head_dim_vo]
};

// nullopt when Prefill can run the case on the current device; otherwise a one-line reason. Cheap
// (host checks and a few cudaDeviceGetAttribute calls).
[[nodiscard]] std::optional<std::string> prefill_unsupported(PrefillPath path, const PrefillShape& shape);

namespace detail {
class PrefillImpl;
}

// Plans in the constructor (FlashInfer's plan, workspaces as the plan sizes them, plan info on the
// device, stream synchronised); throws std::runtime_error on an unsupported case or a failure. run()
// only launches (no allocation, sync or copy): CUDA-graph capturable. Owns its device memory.
class Prefill {
 public:
  Prefill(PrefillPath path, const PrefillShape& shape, cudaStream_t stream);
  ~Prefill();
  Prefill(Prefill&&) noexcept;
  Prefill& operator=(Prefill&&) noexcept;
  Prefill(const Prefill&) = delete;
  Prefill& operator=(const Prefill&) = delete;

  // Launches FlashInfer's kernel(s) on `stream`; returns the first launch error, or cudaSuccess.
  [[nodiscard]] cudaError_t run(const PrefillTensors& tensors, cudaStream_t stream) const;

  // What FlashInfer's plan chose, for verbose logs.
  [[nodiscard]] const std::string& plan_summary() const;

 private:
  std::unique_ptr<detail::PrefillImpl> impl_;
};

}  // namespace kbench::backends::flashinfer
