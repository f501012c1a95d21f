// Internal to kbench_flashinfer: the interface between the API (api.cu) and the translation units
// that instantiate FlashInfer's kernels. No FlashInfer header here either.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "backends/flashinfer/flashinfer_decode.hpp"
#include "backends/flashinfer/flashinfer_mla.hpp"
#include "backends/flashinfer/flashinfer_prefill.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"

namespace kbench::backends::flashinfer::detail {

// Page-locked host memory (cudaMallocHost / cudaFreeHost): the staging buffer FlashInfer's plan
// functions write the int workspace into before their cudaMemcpyAsync.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) KBENCH_CUDA_CHECK(cudaMallocHost(&ptr_, bytes_));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
  }
  [[nodiscard]] void* get() const noexcept { return ptr_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// nullopt when the current device runs kbench_flashinfer's kernels (this build has an image for it;
// and, with need_sm90, it is sm_90: the fa3 kernels); else the reason (api.cu).
std::optional<std::string> device_unsupported(bool need_sm90);

// Slack added to the sizes FlashInfer's *WorkspaceSize functions report (their count-only pass and
// the real pass align the same offsets; the slack only guards against a rounding difference).
inline constexpr std::size_t kWorkspaceSlack = 4096;

class DecodeImpl {
 public:
  virtual ~DecodeImpl() = default;
  virtual cudaError_t run(const DecodeTensors& t, cudaStream_t stream) const = 0;
  std::string summary;
};

class PrefillImpl {
 public:
  virtual ~PrefillImpl() = default;
  virtual cudaError_t run(const PrefillTensors& t, cudaStream_t stream) const = 0;
  std::string summary;
};

class MlaImpl {
 public:
  virtual ~MlaImpl() = default;
  virtual cudaError_t run(const MlaTensors& t, cudaStream_t stream) const = 0;
  std::string summary;
};

// One factory per translation unit; each plans (FlashInfer's plan), allocates and synchronises, and
// throws std::runtime_error on failure. The shape has passed *_unsupported already.
std::unique_ptr<DecodeImpl> make_decode_cuda_cores_bf16(const DecodeShape& shape, cudaStream_t stream);
std::unique_ptr<DecodeImpl> make_decode_cuda_cores_fp16(const DecodeShape& shape, cudaStream_t stream);
std::unique_ptr<PrefillImpl> make_prefill_fa2_ragged_bf16(const PrefillShape& shape, cudaStream_t stream);
std::unique_ptr<PrefillImpl> make_prefill_fa2_ragged_fp16(const PrefillShape& shape, cudaStream_t stream);
std::unique_ptr<PrefillImpl> make_prefill_fa2_paged_bf16(const PrefillShape& shape, cudaStream_t stream);
std::unique_ptr<PrefillImpl> make_prefill_fa2_paged_fp16(const PrefillShape& shape, cudaStream_t stream);
std::unique_ptr<PrefillImpl> make_prefill_fa3_bf16(const PrefillShape& shape, cudaStream_t stream);
std::unique_ptr<PrefillImpl> make_prefill_fa3_fp16(const PrefillShape& shape, cudaStream_t stream);
std::unique_ptr<MlaImpl> make_mla_fa2_bf16(const MlaShape& shape, cudaStream_t stream);
std::unique_ptr<MlaImpl> make_mla_fa3_bf16(const MlaShape& shape, cudaStream_t stream);

// The kbench paged cache seen as FlashInfer's (K, V, strides): element offsets of V within a page and
// the strides of the 4-D [page][slot|head][head|slot][dim] view FlashInfer's paged_kv_t takes, in
// the order of its layout (NHD: page, slot, head; HND: page, head, slot).
struct PagedCacheView {
  int64_t v_offset;     // elements from a page's K to its V: H * P * D
  int64_t strides[4];   // {page, dim1, dim2, 1}
};
inline PagedCacheView paged_cache_view(int num_kv_heads, int page_size, int head_dim, kernels::KvLayout layout) {
  const int64_t h = num_kv_heads, p = page_size, d = head_dim;
  PagedCacheView view{};
  view.v_offset = h * p * d;
  view.strides[0] = 2 * h * p * d;
  view.strides[1] = layout == kernels::KvLayout::NHD ? h * d : p * d;  // NHD: slot stride; HND: head stride
  view.strides[2] = d;                                                 // NHD: head stride; HND: slot stride
  view.strides[3] = 1;
  return view;
}

}  // namespace kbench::backends::flashinfer::detail
