// CUDA error checking that throws: every runtime call in kbench goes through KBENCH_CUDA_CHECK, and
// every kernel launch is followed by KBENCH_CUDA_CHECK(cudaGetLastError()).
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace kbench {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  throw CudaError(code, std::string(cudaGetErrorName(code)) + " (" + cudaGetErrorString(code) + ") in " + expr +
                            " at " + file + ":" + std::to_string(line));
}

}  // namespace kbench

#define KBENCH_CUDA_CHECK(expr)                                                          \
  do {                                                                                   \
    const cudaError_t kbench_status_ = (expr);                                           \
    if (kbench_status_ != cudaSuccess) {                                                 \
      ::kbench::throw_cuda_error(kbench_status_, #expr, __FILE__, __LINE__);             \
    }                                                                                    \
  } while (0)
