// FlashInfer's own paged decode attention (flashinfer-python 0.7.2.post1, header-only kernels) as the
// `flashinfer` yardstick backend, on both paths FlashInfer's BatchDecodeWithPagedKVCacheWrapper has:
//   cuda_cores:   BatchDecodeWithPagedKVCacheDispatched (flashinfer/attention/decode.cuh) after
//                 DecodePlan (scheduler.cuh); use_tensor_cores=False.
//   tensor_cores: the fa2 batch prefill kernel on the paged cache with one query token per request
//                 (PrefillPlan + BatchPrefillWithPagedKVCacheDispatched, causal off), which is what
//                 use_tensor_cores=True runs.
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

enum class DecodePath { cuda_cores, tensor_cores };

// The case, as planned on the host. kbench's paged cache is ONE buffer of num_pages pages, K and V
// interleaved per page (P = page_size, H = num_kv_heads, D = head_dim):
//   HND: cache[page][2][H][P][D]      NHD: cache[page][2][P][H][D]
// so K of page p starts at element p*2*H*P*D, V at that + H*P*D, and the page stride is 2*H*P*D.
// Request b owns pages indices[indptr[b] .. indptr[b+1]) in order; its last page holds
// last_page_len[b] (1..page_size) tokens, so kv_len[b] = (pages - 1) * page_size + last_page_len[b].
// Softmax scale sm_scale (kbench: 1/sqrt(head_dim)); no soft cap, sliding window, rope or ALiBi.
struct DecodeShape {
  int batch = 0;
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int page_size = 0;
  int num_pages = 0;
  kernels::KvLayout layout = kernels::KvLayout::NHD;
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  float sm_scale = 0.f;
  std::vector<int32_t> indptr;         // host, batch + 1 page offsets (indptr[0] = 0)
  std::vector<int32_t> last_page_len;  // host, batch entries in 1..page_size
  // Programmatic dependent launch on FlashInfer's launches. FlashInfer's Python run() turns it on by
  // default where the device supports it (enable_pdl=None -> device_support_pdl: sm_90 and newer).
  bool enable_pdl = false;
};

// Device pointers for one run. indptr / indices / last_page_len must hold the same values as the
// host page table the Decode object was planned with (FlashInfer's plan is built from them).
struct DecodeTensors {
  const void* q = nullptr;               // [batch][num_qo_heads][head_dim], q_dtype
  const void* kv_cache = nullptr;        // the interleaved paged cache above, kv_dtype
  const int32_t* indptr = nullptr;       // [batch + 1]
  const int32_t* indices = nullptr;      // [indptr[batch]] page ids in 0..num_pages-1
  const int32_t* last_page_len = nullptr;  // [batch]
  void* out = nullptr;                   // [batch][num_qo_heads][head_dim], out_dtype
};

// nullopt when Decode can run the case on the current device; otherwise a one-line reason. Cheap
// (host checks and two cudaDeviceGetAttribute calls).
[[nodiscard]] std::optional<std::string> decode_unsupported(DecodePath path, const DecodeShape& shape);

namespace detail {
class DecodeImpl;
}

// Plans in the constructor (FlashInfer's own plan: split-KV where it pays, workspaces sized as the
// plan asks, plan info copied to the device, stream synchronised); throws std::runtime_error on an
// unsupported case or a failure. run() only launches: no allocation, no host sync, no copies, so it
// can be captured in a CUDA graph. The object owns its device memory.
class Decode {
 public:
  Decode(DecodePath path, const DecodeShape& shape, cudaStream_t stream);
  ~Decode();
  Decode(Decode&&) noexcept;
  Decode& operator=(Decode&&) noexcept;
  Decode(const Decode&) = delete;
  Decode& operator=(const Decode&) = delete;

  // Launches FlashInfer's kernel(s) on `stream`; returns the first launch error, or cudaSuccess.
  [[nodiscard]] cudaError_t run(const DecodeTensors& tensors, cudaStream_t stream) const;

  // What FlashInfer's plan chose, for verbose logs ("split_kv=1 padded_batch=264 ...").
  [[nodiscard]] const std::string& plan_summary() const;

 private:
  std::unique_ptr<detail::DecodeImpl> impl_;
};

}  // namespace kbench::backends::flashinfer
