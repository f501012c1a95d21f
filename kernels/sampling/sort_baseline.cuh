// The sort-based baseline (backend `cub`), device code and the private interface between
// sort_baseline_launch.cu and the per-dtype translation units sort_baseline_<dtype>.cu: CUB's
// DeviceSegmentedSort (descending, values with their indices), then one CTA per row walking the
// sorted row with block-wide prefix sums, as torch.sort + cumsum + searchsorted would.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/sampling/sampling.hpp"
#include "kernels/sampling/sampling_common.cuh"

namespace kbench::kernels::sampling_detail {

inline constexpr int kTailThreads = 256;

// What the tail kernel reads and writes (the sort's outputs, the segment ends, the routine's).
struct TailArgs {
  sampling::SortedOp op;
  const void* keys;      // [rows][cols] sorted descending within each segment
  const int32_t* index;  // [rows][cols] the keys' columns
  const int32_t* end;    // [rows] row r's segment is [r * cols, end[r])
  int64_t cols;
  bool from_logits;
  int64_t top_k;
  float top_p;
  float min_p;
  bool joint;
  const uint64_t* rng;
  int32_t* samples;
  void* output;
  sampling::TopKParams top;
};

// One input dtype's sort and tail (sort_baseline_<dtype>.cu, from sort_baseline_instance.cuh).
struct SortKernels {
  cudaError_t (*temp_bytes)(int64_t items, int64_t segments, std::size_t* bytes);
  cudaError_t (*sort)(const void* keys_in, void* keys_out, const int32_t* index_in, int32_t* index_out, int64_t items,
                      int64_t segments, const int32_t* begin, const int32_t* end, void* temp, std::size_t temp_bytes,
                      cudaStream_t stream);
  void (*tail)(TailArgs);
};
SortKernels sort_kernels_f32();
SortKernels sort_kernels_f16();
SortKernels sort_kernels_bf16();

struct PlusF {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Running prefix sums over the first m weights of a sorted row, a block-wide chunk at a time.
// Visits every position j < m with (j, weight, exclusive prefix, inclusive prefix) in every thread
// that holds it; stops after the chunk in which `done(inclusive prefix of the chunk's end)` holds.
template <class Weight, class Visit, class Done>
__device__ float scan_sorted(int64_t m, Weight weight, Visit visit, Done done, float* scratch) {
  float carry = 0.0f;
  for (int64_t base = 0; base < m; base += blockDim.x) {
    const int64_t j = base + threadIdx.x;
    const float w = j < m ? weight(j) : 0.0f;
    const Scan<float> s = block_scan(w, scratch);
    if (j < m) visit(j, w, carry + s.excl, carry + s.incl);
    carry = carry + s.total;
    if (done(carry)) break;
  }
  return carry;
}

template <class T>
__global__ void __launch_bounds__(kTailThreads) sorted_tail_kernel(TailArgs a) {
  __shared__ float scratch[kMaxWarps];
  __shared__ unsigned long long found;
  const int64_t row = blockIdx.x;
  const int64_t first = row * a.cols;
  const int64_t len = a.end[row] - first;
  const T* keys = static_cast<const T*>(a.keys) + first;
  const int32_t* index = a.index + first;
  const auto value = [&](int64_t j) { return Elem<T>::to_float(keys[j]); };
  const float top = len > 0 ? value(0) : 0.0f;
  const auto weight = [&](int64_t j) { return a.from_logits ? __expf(value(j) - top) : value(j); };
  const auto never = [](float) { return false; };
  const auto nothing = [](int64_t, float, float, float) {};

  // The kept prefix [0, m) of the sorted row.
  // top_k is a parameter of the sampler and the top-k filters only (top_p_renorm's case carries the
  // --top_k flag's default, 50, which must not cut its nucleus).
  const bool uses_top_k = a.op == sampling::SortedOp::sample || a.op == sampling::SortedOp::top_k_mask ||
                          a.op == sampling::SortedOp::top_k_renorm;
  int64_t m = len;
  if (uses_top_k && a.top_k > 0 && a.top_k < m) m = a.top_k;
  if (a.op == sampling::SortedOp::sample && a.min_p > 0.0f && !a.from_logits) {
    // The first position below min_p * max (binary search: the row is sorted).
    int64_t lo = 0, hi = m;
    const float floor = a.min_p * top;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (value(mid) >= floor) lo = mid + 1; else hi = mid;
    }
    m = lo;
  }
  const bool top_p = (a.op == sampling::SortedOp::sample || a.op == sampling::SortedOp::top_p_renorm) && a.top_p < 1.0f;
  if (top_p) {
    // Keep j while the mass before it is below top_p times the reference mass: through the first
    // position whose running sum reaches it.
    const int64_t reference_span = (a.joint || a.op == sampling::SortedOp::top_p_renorm) ? len : m;
    const float reference = scan_sorted(reference_span, weight, nothing, never, scratch);
    const float bound = a.top_p * reference;
    if (threadIdx.x == 0) found = static_cast<unsigned long long>(m);
    __syncthreads();
    scan_sorted(
        m, weight,
        [&](int64_t j, float, float, float incl) {
          if (incl >= bound) atomicMin(&found, static_cast<unsigned long long>(j + 1));
        },
        [&](float carry) { return carry >= bound; }, scratch);
    __syncthreads();
    m = static_cast<int64_t>(found);
    if (m < 1 && len > 0) m = 1;  // the largest is always kept
    __syncthreads();
  }

  switch (a.op) {
    case sampling::SortedOp::sample: {
      const float mass = scan_sorted(m, weight, nothing, never, scratch);
      float target = sampling_detail::philox_uniform(a.rng, static_cast<uint64_t>(row), 0u) * mass;
      if (!(target < mass)) target = nextafterf(mass, 0.0f);
      if (threadIdx.x == 0) found = static_cast<unsigned long long>(m > 0 ? m - 1 : 0);
      __syncthreads();
      scan_sorted(
          m, weight,
          [&](int64_t j, float w, float excl, float incl) {
            if (w > 0.0f && excl <= target && target < incl) atomicMin(&found, static_cast<unsigned long long>(j));
          },
          [&](float carry) { return carry > target; }, scratch);
      __syncthreads();
      if (threadIdx.x == 0) a.samples[row] = len > 0 ? index[found] : 0;
      break;
    }
    case sampling::SortedOp::top_k_mask:
    case sampling::SortedOp::top_k_renorm:
    case sampling::SortedOp::top_p_renorm: {
      T* out = static_cast<T*>(a.output) + first;
      const bool mask = a.op == sampling::SortedOp::top_k_mask;
      const T fill = Elem<T>::from_float(mask ? -INFINITY : 0.0f);
      for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) out[c] = fill;
      const float kept = mask ? 1.0f : scan_sorted(m, weight, nothing, never, scratch);
      __syncthreads();  // the fill before the scatter
      for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
        out[index[j]] = mask ? keys[j] : Elem<T>::from_float(value(j) / kept);
      }
      break;
    }
    case sampling::SortedOp::top_k: {
      const sampling::TopKParams& t = a.top;
      for (int64_t j = threadIdx.x; j < t.k; j += blockDim.x) {
        const int64_t at = row * t.k + j;
        const int64_t col = j < len ? index[j] : -1;
        switch (t.output) {
          case sampling::TopKOutput::values_indices:
            if (col >= 0) static_cast<T*>(t.values)[at] = keys[j];
            t.indices[at] = col;
            break;
          case sampling::TopKOutput::page_table:
            t.mapped[at] = col < 0 ? -1 : t.page_table[row * t.page_table_stride + col];
            break;
          case sampling::TopKOutput::ragged:
            t.mapped[at] = col < 0 ? -1 : static_cast<int32_t>(col + t.offsets[row]);
            break;
        }
      }
      break;
    }
  }
}

}  // namespace kbench::kernels::sampling_detail
