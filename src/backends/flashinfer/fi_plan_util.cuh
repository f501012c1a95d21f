// Internal to kbench_flashinfer's kernel translation units (includes FlashInfer's headers): helpers
// shared by the decode and prefill implementations.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <exception>
#include <stdexcept>
#include <string>

#include "backends/flashinfer/fi_internal.hpp"

namespace kbench_fi {

// Turns a failed FlashInfer plan call (an error code or a thrown flashinfer::Error) into the
// std::runtime_error the constructors promise.
inline void plan_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("flashinfer: ") + what + " failed: " + cudaGetErrorString(status));
  }
}

template <class F>
cudaError_t launch_guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::exception&) {  // FlashInfer's dispatch macros throw on values they cannot take
    return cudaErrorInvalidValue;
  }
}

inline std::string head_dim_error(int qk, int vo) {
  return "flashinfer: head dims " + std::to_string(qk) + "/" + std::to_string(vo) + " are not instantiated";
}

}  // namespace kbench_fi
