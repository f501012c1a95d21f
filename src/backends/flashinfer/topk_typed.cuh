// FlashInfer's radix top-k family (flashinfer/topk.cuh) for one input dtype, called with the
// arguments of flashinfer's Python API (flashinfer.top_k: unsorted, not deterministic, then
// .long(); the transforms with 1:1 rows and no row starts; top_k_mask_logits and top_k_renorm_probs
// with their multi-CTA radix kernels), and this dtype's stand-ins for torch ops (.float(), the
// softmax over the k values of the from_logits fast path). Included by topk_<dtype>.cu only.
#pragma once

// topk.cuh uses flashinfer::math without including it (FlashInfer's own build includes sampling.cuh first).
#include <flashinfer/math.cuh>
#include <flashinfer/topk.cuh>

#include <exception>

#include "backends/flashinfer/fi_sampling_internal.hpp"

namespace kbench::backends::flashinfer::detail {
namespace topk_typed {

namespace fs = ::flashinfer::sampling;

inline uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }
inline fs::RadixRowState* states(void* p) { return static_cast<fs::RadixRowState*>(p); }

template <class Call>
cudaError_t guarded(Call call) {
  try {
    return call();
  } catch (const std::exception&) {  // FlashInfer's dispatch macros throw on values they cannot take
    return cudaErrorInvalidValue;
  }
}

constexpr int kThreads = 256;

template <class T>
__global__ void to_float_kernel(const T* in, float* out, int64_t count) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<float>(in[i]);
  }
}

// torch.softmax(values.float(), -1) over k values per row: one CTA per row.
template <class T>
__global__ void softmax_rows_kernel(const T* values, float* out, int64_t k) {
  __shared__ float partial[kThreads];
  const int64_t row = blockIdx.x;
  const T* v = values + row * k;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < k; j += blockDim.x) m = fmaxf(m, static_cast<float>(v[j]));
  partial[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  m = partial[0];
  __syncthreads();
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < k; j += blockDim.x) sum += __expf(static_cast<float>(v[j]) - m);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.0f / partial[0];
  for (int64_t j = threadIdx.x; j < k; j += blockDim.x) out[row * k + j] = __expf(static_cast<float>(v[j]) - m) * inv;
}

template <class T>
TopKKernels kernels() {
  TopKKernels k{};
  k.to_float = [](const void* in, float* out, int64_t count, cudaStream_t stream) {
    const int64_t blocks = count / kThreads + 1 < 4096 ? count / kThreads + 1 : 4096;
    to_float_kernel<T><<<u32(blocks), kThreads, 0, stream>>>(static_cast<const T*>(in), out, count);
    return cudaGetLastError();
  };
  k.softmax_rows = [](const void* values, float* out, int64_t rows, int64_t k_val, cudaStream_t stream) {
    softmax_rows_kernel<T><<<u32(rows), kThreads, 0, stream>>>(static_cast<const T*>(values), out, k_val);
    return cudaGetLastError();
  };
  k.top_k = [](const void* in, int32_t* indices, void* values, int64_t rows, int64_t cols, int64_t k_val,
               void* row_states, bool sorted, bool deterministic, cudaStream_t stream) {
    return guarded([&] {
      return fs::TopKDispatch<T, int32_t>(const_cast<T*>(static_cast<const T*>(in)), indices, static_cast<T*>(values),
                                          u32(rows), u32(k_val), u32(cols), states(row_states), sorted, deterministic,
                                          fs::TopKTieBreak::None, stream);
    });
  };
  k.page_table = [](const void* in, int32_t* out, const int32_t* page_table, const int32_t* lengths, int64_t rows,
                    int64_t cols, int64_t k_val, void* row_states, cudaStream_t stream) {
    return guarded([&] {
      return fs::TopKPageTableTransformDispatch<T, int32_t>(
          const_cast<T*>(static_cast<const T*>(in)), out, page_table, cols, const_cast<int32_t*>(lengths), nullptr,
          nullptr, u32(rows), u32(k_val), u32(cols), states(row_states), false, fs::TopKTieBreak::None, stream);
    });
  };
  k.ragged = [](const void* in, int32_t* out, const int32_t* offsets, const int32_t* lengths, int64_t rows,
                int64_t cols, int64_t k_val, void* row_states, cudaStream_t stream) {
    return guarded([&] {
      return fs::TopKRaggedTransformDispatch<T, int32_t>(const_cast<T*>(static_cast<const T*>(in)), out, offsets,
                                                         const_cast<int32_t*>(lengths), nullptr, u32(rows), u32(k_val),
                                                         u32(cols), states(row_states), false, fs::TopKTieBreak::None,
                                                         stream);
    });
  };
  k.mask = [](const void* in, void* out, int64_t rows, int64_t cols, int64_t k_val, void* row_states,
              cudaStream_t stream) {
    return guarded([&] {
      return fs::RadixTopKMaskLogitsMultiCTA<T, int>(const_cast<T*>(static_cast<const T*>(in)), static_cast<T*>(out),
                                                     nullptr, u32(rows), u32(k_val), u32(cols), states(row_states),
                                                     stream);
    });
  };
  k.renorm = [](const void* in, void* out, int64_t rows, int64_t cols, int64_t k_val, void* row_states,
                cudaStream_t stream) {
    return guarded([&] {
      return fs::RadixTopKRenormProbMultiCTA<T, int>(const_cast<T*>(static_cast<const T*>(in)), static_cast<T*>(out),
                                                     nullptr, u32(rows), u32(k_val), u32(cols), states(row_states),
                                                     false, stream);
    });
  };
  return k;
}

}  // namespace topk_typed
}  // namespace kbench::backends::flashinfer::detail
