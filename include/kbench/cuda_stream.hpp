// An owning, move-only non-blocking CUDA stream (graph capture needs a stream other than the
// legacy default stream).
#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#include "kbench/cuda_check.hpp"

namespace kbench {

class CudaStream {
 public:
  CudaStream() { KBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  CudaStream(CudaStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  CudaStream& operator=(CudaStream&& other) noexcept {
    if (this != &other) {
      if (stream_ != nullptr) cudaStreamDestroy(stream_);
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }
  ~CudaStream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }
  void synchronize() const { KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace kbench
