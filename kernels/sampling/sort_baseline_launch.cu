// The sort-based baseline's host side: its workspace, checks and the three launches of a call
// (segment ends, CUB's segmented sort, the tail), dispatched to sort_baseline_<dtype>.cu.
#include <algorithm>
#include <cstdint>

#include "kernels/sampling/sort_baseline.cuh"

namespace kbench::kernels::sampling {
namespace {

using namespace sampling_detail;

constexpr std::size_t kAlign = 256;
std::size_t aligned(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

const SortKernels* kernels_for(DType t) {
  static const SortKernels f32 = sort_kernels_f32();
  static const SortKernels f16 = sort_kernels_f16();
  static const SortKernels bf16 = sort_kernels_bf16();
  switch (t) {
    case DType::float32: return &f32;
    case DType::float16: return &f16;
    case DType::bfloat16: return &bf16;
    default: return nullptr;
  }
}

// The workspace: segment begins and ends, the unsorted indices 0..cols-1 of every row, the sorted
// keys and indices, CUB's temporary storage.
struct Layout {
  std::size_t begin = 0, end = 0, iota = 0, keys = 0, index = 0, temp = 0, temp_bytes = 0, total = 0;
};

bool valid(const SortBaselineParams& p) {
  if (p.input == nullptr || p.rows <= 0 || p.cols <= 0 || kernels_for(p.dtype) == nullptr) return false;
  if (p.rows * p.cols > 0x7FFFFFFF) return false;  // CUB's offsets are int32 here
  switch (p.op) {
    case SortedOp::sample:
      return p.samples != nullptr && p.rng != nullptr && (p.from_logits || p.dtype == DType::float32) &&
             p.top_k >= 0 && p.top_p > 0.0f && p.top_p <= 1.0f && p.min_p >= 0.0f;
    case SortedOp::top_k_mask:
    case SortedOp::top_k_renorm: return p.output != nullptr && p.top_k >= 1 && p.top_k <= p.cols;
    case SortedOp::top_p_renorm: return p.output != nullptr && p.dtype == DType::float32 && p.top_p > 0.0f && p.top_p <= 1.0f;
    case SortedOp::top_k:
      switch (p.top.output) {
        case TopKOutput::values_indices: return p.top_k >= 1 && p.top.values != nullptr && p.top.indices != nullptr;
        case TopKOutput::page_table: return p.top_k >= 1 && p.top.mapped != nullptr && p.top.page_table != nullptr;
        case TopKOutput::ragged: return p.top_k >= 1 && p.top.mapped != nullptr && p.top.offsets != nullptr;
      }
  }
  return false;
}

cudaError_t layout(const SortBaselineParams& p, Layout* l) {
  if (!valid(p)) return cudaErrorInvalidValue;
  const auto items = static_cast<std::size_t>(p.rows * p.cols);
  const cudaError_t status = kernels_for(p.dtype)->temp_bytes(p.rows * p.cols, p.rows, &l->temp_bytes);
  if (status != cudaSuccess) return status;
  l->begin = 0;
  l->end = l->begin + aligned(static_cast<std::size_t>(p.rows) * sizeof(int32_t));
  l->iota = l->end + aligned(static_cast<std::size_t>(p.rows) * sizeof(int32_t));
  l->keys = l->iota + aligned(items * sizeof(int32_t));
  l->index = l->keys + aligned(items * dtype_size(p.dtype));
  l->temp = l->index + aligned(items * sizeof(int32_t));
  l->total = l->temp + aligned(l->temp_bytes);
  return cudaSuccess;
}

__global__ void prepare_kernel(int32_t* begin, int32_t* iota, int64_t rows, int64_t cols) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * cols; i += stride) {
    iota[i] = static_cast<int32_t>(i % cols);
    if (i < rows) begin[i] = static_cast<int32_t>(i * cols);
  }
}

__global__ void segment_ends_kernel(int32_t* end, const int32_t* lengths, int64_t rows, int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  int64_t len = cols;
  if (lengths != nullptr) len = lengths[r] < 0 ? 0 : (lengths[r] < cols ? lengths[r] : cols);
  end[r] = static_cast<int32_t>(r * cols + len);
}

template <class T>
T* at(void* base, std::size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

}  // namespace

cudaError_t sort_baseline_workspace(const SortBaselineParams& p, std::size_t* bytes) {
  Layout l;
  const cudaError_t status = layout(p, &l);
  if (status == cudaSuccess) *bytes = l.total;
  return status;
}

cudaError_t prepare_sort_baseline(const SortBaselineParams& p, void* workspace, std::size_t bytes, cudaStream_t stream) {
  Layout l;
  cudaError_t status = layout(p, &l);
  if (status != cudaSuccess) return status;
  if (workspace == nullptr || bytes < l.total) return cudaErrorInvalidValue;
  const int64_t blocks = std::min<int64_t>((p.rows * p.cols + 255) / 256, 8192);
  prepare_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(at<int32_t>(workspace, l.begin),
                                                                    at<int32_t>(workspace, l.iota), p.rows, p.cols);
  return cudaGetLastError();
}

cudaError_t launch_sort_baseline(const SortBaselineParams& p, void* workspace, std::size_t bytes, cudaStream_t stream) {
  Layout l;
  cudaError_t status = layout(p, &l);
  if (status != cudaSuccess) return status;
  if (workspace == nullptr || bytes < l.total) return cudaErrorInvalidValue;
  const SortKernels& k = *kernels_for(p.dtype);
  const int32_t* lengths = p.op == SortedOp::top_k ? p.top.lengths : nullptr;
  segment_ends_kernel<<<static_cast<unsigned>((p.rows + 255) / 256), 256, 0, stream>>>(at<int32_t>(workspace, l.end),
                                                                                        lengths, p.rows, p.cols);
  status = cudaGetLastError();
  if (status != cudaSuccess) return status;
  status = k.sort(p.input, at<void>(workspace, l.keys), at<int32_t>(workspace, l.iota), at<int32_t>(workspace, l.index),
                  p.rows * p.cols, p.rows, at<int32_t>(workspace, l.begin), at<int32_t>(workspace, l.end),
                  at<void>(workspace, l.temp), l.temp_bytes, stream);
  if (status != cudaSuccess) return status;
  TailArgs a{};
  a.op = p.op;
  a.keys = at<void>(workspace, l.keys);
  a.index = at<int32_t>(workspace, l.index);
  a.end = at<int32_t>(workspace, l.end);
  a.cols = p.cols;
  a.from_logits = p.from_logits;
  a.top_k = p.top_k;
  a.top_p = p.top_p;
  a.min_p = p.min_p;
  a.joint = p.joint;
  a.rng = p.rng;
  a.samples = p.samples;
  a.output = p.output;
  a.top = p.top;
  a.top.k = p.top_k;
  k.tail<<<static_cast<unsigned>(p.rows), kTailThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::sampling
