// Evicting the L2 before a measured iteration.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace kbench::detail {

// Reads `bytes` of `buffer` (a multiple of 16, 16-byte aligned) so every line the timed work left
// in the L2 is evicted, its dirty lines written back now, outside the measured window. A read, not
// a memset: a memset would leave the L2 full of dirty lines that the timed kernel then pays to
// write back (measured on an H100: +9% on a 0.09 ms rmsnorm against Nsight Compute's cache flush).
[[nodiscard]] cudaError_t launch_l2_flush(const void* buffer, std::size_t bytes, cudaStream_t stream);

}  // namespace kbench::detail
