// Host <-> device helpers every routine family's cases share.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kbench/dtype.hpp"

namespace kbench {

// FP8 input tensors hold N(0, 1) data scaled by this factor (amax about 50, well inside e4m3's 448)
// and are dequantised with its reciprocal: the vLLM benchmark's 0.1 * 448 / amax, made
// deterministic.
inline constexpr float kFp8DataScale = 10.0f;

// Independent streams of random numbers per (seed, input copy, tensor id).
[[nodiscard]] inline uint64_t tensor_seed(uint64_t seed, int copy, int tensor) {
  return seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(copy) * 64 + static_cast<uint64_t>(tensor);
}

// A device copy of `host` (at least one element's worth, so empty tables still have a pointer).
template <class T>
[[nodiscard]] DeviceBuffer upload(const std::vector<T>& host, cudaStream_t stream) {
  DeviceBuffer buffer(std::max<std::size_t>(host.size(), 1) * sizeof(T));
  if (!host.empty()) {
    KBENCH_CUDA_CHECK(
        cudaMemcpyAsync(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  return buffer;
}

// The current device's SM count (what the kernels' planners size their grids by).
[[nodiscard]] int current_device_sm_count();

// `count` elements of `dtype` as host floats, converted on the device through `scratch`
// (count floats); synchronises `stream`.
[[nodiscard]] std::vector<float> to_host_floats(const void* data, DType dtype, std::size_t count, float* scratch,
                                                cudaStream_t stream);

}  // namespace kbench
