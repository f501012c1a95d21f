// Device tensors read back as host floats, converted on the host: the refcheck's view of a
// backend's output, without any kernel of kbench's in between.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kbench/dtype.hpp"

namespace kbench {

// `bytes` bytes at `data` (device memory) as they lie; synchronises `stream`.
[[nodiscard]] std::vector<uint8_t> read_bytes(const void* data, std::size_t bytes, cudaStream_t stream);

// `count` elements of `dtype` at `data` (device memory) as floats; synchronises `stream`.
[[nodiscard]] std::vector<float> read_as_floats(const void* data, DType dtype, std::size_t count,
                                                cudaStream_t stream);

}  // namespace kbench
