// Device tensor utilities shared by every routine family: deterministic random fill, poisoning,
// and conversion to fp32 for comparison. Knows nothing of the harness.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kbench/dtype.hpp"

namespace kbench::kernels {

// Fills `count` elements with normal(mean, stddev) values from a counter-based generator: the same
// (seed, index) always gives the same value, on any GPU and launch shape. Values are rounded to
// `dtype` (fp8: saturated).
[[nodiscard]] cudaError_t fill_normal(void* data, DType dtype, int64_t count, uint64_t seed, float mean,
                                      float stddev, cudaStream_t stream);

// Fills `count` elements with values uniform in [low, high) (24 random bits each, as torch.rand's),
// from the same counter-based generator. A value that rounds up to `high` in `dtype` becomes `low`
// (torch's rule), so every element lies in [low, high). Requires low < high.
[[nodiscard]] cudaError_t fill_uniform(void* data, DType dtype, int64_t count, uint64_t seed, float low, float high,
                                       cudaStream_t stream);

// Writes 0xFF to every byte: NaN in bfloat16, float16, float32, fp8_e4m3 and fp8_e5m2, so an
// element a kernel forgot to write fails every comparison.
[[nodiscard]] cudaError_t poison(void* data, int64_t bytes, cudaStream_t stream);

// Converts `count` elements of `dtype` to float.
[[nodiscard]] cudaError_t convert_to_float(const void* data, DType dtype, int64_t count, float* out,
                                           cudaStream_t stream);

}  // namespace kbench::kernels
