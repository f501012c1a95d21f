// One key dtype's sort-based baseline: CUB's segmented sort (descending, with indices) and the tail
// kernel that walks the sorted rows. Included once per key dtype by sort_baseline_<dtype>.cu, so each
// CUB instantiation compiles in a translation unit of its own.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_segmented_sort.cuh>

#include "kernels/sampling/sort_baseline.cuh"

namespace kbench::kernels::sampling_detail {

template <class Key>
struct SortBaseline {
  static cudaError_t temp_bytes(int64_t items, int64_t segments, std::size_t* bytes) {
    return cub::DeviceSegmentedSort::SortPairsDescending(
        nullptr, *bytes, static_cast<const Key*>(nullptr), static_cast<Key*>(nullptr),
        static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr), items, segments,
        static_cast<const int32_t*>(nullptr), static_cast<const int32_t*>(nullptr));
  }
  static cudaError_t sort(const void* keys_in, void* keys_out, const int32_t* index_in, int32_t* index_out,
                          int64_t items, int64_t segments, const int32_t* begin, const int32_t* end, void* temp,
                          std::size_t temp_bytes, cudaStream_t stream) {
    return cub::DeviceSegmentedSort::SortPairsDescending(temp, temp_bytes, static_cast<const Key*>(keys_in),
                                                          static_cast<Key*>(keys_out), index_in, index_out, items,
                                                          segments, begin, end, stream);
  }
  static SortKernels kernels() { return {temp_bytes, sort, sorted_tail_kernel<Key>}; }
};

}  // namespace kbench::kernels::sampling_detail
