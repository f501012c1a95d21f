// FlashInfer's samplers, softmax, top-p renorm and chain speculative sampling on float32 rows
// (flashinfer/sampling.cuh, air_top_p.cuh), with the arguments flashinfer's Python API passes
// (deterministic = True; seed and offset as device tensors), and kbench's stand-ins for the torch
// ops of the top_k_first fast path (values / values.sum(), the gather back to vocabulary ids, the
// int32 -> int64 cast of top_k's indices).
#include <flashinfer/air_top_p.cuh>
#include <flashinfer/sampling.cuh>

#include <algorithm>
#include <exception>

#include "backends/flashinfer/fi_sampling_internal.hpp"

namespace kbench::backends::flashinfer::detail {
namespace {

namespace fs = ::flashinfer::sampling;

constexpr bool kDeterministic = true;  // flashinfer.sampling's default

uint64_t* seed_of(const uint64_t* rng) { return const_cast<uint64_t*>(rng); }
uint64_t* offset_of(const uint64_t* rng) { return const_cast<uint64_t*>(rng) + 1; }
float* mut(const float* p) { return const_cast<float*>(p); }
uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// FlashInfer's dispatch macros throw on values they cannot take.
template <class Call>
cudaError_t guarded(Call call) {
  try {
    return call();
  } catch (const std::exception&) {
    return cudaErrorInvalidValue;
  }
}

constexpr int kGlueThreads = 256;

// probs_k = values / values.sum(-1): one CTA per row.
__global__ void renormalize_kernel(const float* values, float* out, int64_t k) {
  __shared__ float partial[kGlueThreads];
  const int64_t row = blockIdx.x;
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < k; j += blockDim.x) sum += values[row * k + j];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.0f / partial[0];
  for (int64_t j = threadIdx.x; j < k; j += blockDim.x) out[row * k + j] = values[row * k + j] * inv;
}

// indices.gather(1, local).to(int32)
__global__ void gather_kernel(const int32_t* local, const int32_t* indices, int32_t* out, int64_t rows, int64_t k) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) out[r] = indices[r * k + local[r]];
}

__global__ void widen_kernel(const int32_t* in, int64_t* out, int64_t count) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = in[i];
  }
}

}  // namespace

std::size_t softmax_workspace_bytes(int64_t rows, int64_t cols) {
  // flashinfer.softmax's cached 1 MB, or what its vocab-splitting path needs if more.
  const auto slices = static_cast<std::size_t>((cols + 8191) / 8192);
  return std::max<std::size_t>(std::size_t{1} << 20, static_cast<std::size_t>(rows) * slices * sizeof(fs::PartialSoftmaxResult));
}

cudaError_t softmax(const float* logits, float* out, int64_t rows, int64_t cols, float temperature, void* workspace,
                    std::size_t workspace_bytes, bool enable_pdl, cudaStream_t stream) {
  return guarded([&] {
    return fs::OnlineSoftmax<float>(mut(logits), out, u32(rows), u32(cols), nullptr, temperature, workspace,
                                    workspace_bytes, enable_pdl, stream);
  });
}

cudaError_t sampling_from_probs(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols,
                                const uint64_t* rng, cudaStream_t stream) {
  return guarded([&] {
    return fs::SamplingFromProb<float, int>(mut(probs), out, valid, nullptr, u32(rows), u32(cols), kDeterministic,
                                            seed_of(rng), 0, offset_of(rng), 0, stream);
  });
}

cudaError_t sampling_from_logits(const float* logits, int32_t* out, int64_t rows, int64_t cols, const uint64_t* rng,
                                 cudaStream_t stream) {
  return guarded([&] {
    return fs::SamplingFromLogits<float, int>(mut(logits), out, nullptr, u32(rows), u32(cols), kDeterministic,
                                              seed_of(rng), 0, offset_of(rng), 0, stream);
  });
}

cudaError_t top_k_sampling(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols, int64_t k,
                           const uint64_t* rng, cudaStream_t stream) {
  return guarded([&] {
    return fs::TopKSamplingFromProb<float, int>(mut(probs), out, valid, nullptr, nullptr, u32(rows), u32(k), u32(cols),
                                                kDeterministic, seed_of(rng), 0, offset_of(rng), 0, stream);
  });
}

cudaError_t top_p_sampling(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols, float top_p,
                           const uint64_t* rng, cudaStream_t stream) {
  return guarded([&] {
    return fs::TopPSamplingFromProb<float, int>(mut(probs), out, valid, nullptr, nullptr, u32(rows), top_p, u32(cols),
                                                kDeterministic, seed_of(rng), 0, offset_of(rng), 0, stream);
  });
}

cudaError_t min_p_sampling(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols, float min_p,
                           const uint64_t* rng, cudaStream_t stream) {
  return guarded([&] {
    return fs::MinPSamplingFromProb<float, int>(mut(probs), nullptr, out, valid, nullptr, u32(rows), min_p, u32(cols),
                                                kDeterministic, seed_of(rng), 0, offset_of(rng), 0, stream);
  });
}

cudaError_t top_k_top_p_joint(const float* probs, int32_t* out, bool* valid, int64_t rows, int64_t cols, int64_t k,
                              float top_p, const uint64_t* rng, cudaStream_t stream) {
  return guarded([&] {
    return fs::TopKTopPSamplingFromProb<float, int>(mut(probs), nullptr, nullptr, out, valid, nullptr, u32(rows),
                                                    static_cast<int>(k), top_p, u32(cols), kDeterministic,
                                                    seed_of(rng), 0, offset_of(rng), 0, stream);
  });
}

std::size_t top_p_renorm_workspace_bytes(int64_t rows, int64_t cols) {
  // AirTopPRenormProb<false, float>'s layout (counters, histograms, count histograms, two buffers).
  namespace air = fs::air_top_p;
  const auto align256 = [](std::size_t x) { return (x + 255) / 256 * 256; };
  const auto b = static_cast<std::size_t>(rows);
  const auto buf_len = static_cast<std::size_t>(air::calcBufLen<float>(static_cast<air::IdxT>(cols)));
  return align256(sizeof(air::Counter<float>) * b) + align256(sizeof(air::HisT<false, float>) * air::NUM_BUCKETS * b) +
         align256(sizeof(air::IdxT) * air::NUM_BUCKETS * b) + 2 * align256(sizeof(float) * buf_len * b);
}

cudaError_t top_p_renorm(const float* probs, float* out, int64_t rows, int64_t cols, float top_p, void* workspace,
                         cudaStream_t stream) {
  // flashinfer's top_p_renorm_probs: the single-CTA kernel below 2048 columns, AIR top-p (not
  // deterministic: the Python default) above.
  return guarded([&] {
    if (cols < fs::air_top_p::NUM_BUCKETS) {
      return fs::TopPRenormProb<float>(mut(probs), out, nullptr, u32(rows), top_p, u32(cols), stream);
    }
    return fs::air_top_p::AirTopPRenormProb<false, float>(mut(probs), out, nullptr, u32(rows), top_p, u32(cols),
                                                         workspace, stream);
  });
}

cudaError_t chain_speculative(const float* draft, const int32_t* draft_ids, const float* target, int32_t* out_ids,
                              int32_t* accepted, int32_t* emitted, int64_t rows, int64_t n, int64_t cols,
                              const uint64_t* rng, cudaStream_t stream) {
  return guarded([&] {
    return fs::ChainSpeculativeSampling<float, int>(mut(draft), const_cast<int32_t*>(draft_ids), mut(target), out_ids,
                                                    accepted, emitted, u32(rows), u32(n), u32(cols), kDeterministic,
                                                    seed_of(rng), 0, offset_of(rng), 0, stream);
  });
}

cudaError_t renormalize_rows(const float* values, float* out, int64_t rows, int64_t k, cudaStream_t stream) {
  renormalize_kernel<<<u32(rows), kGlueThreads, 0, stream>>>(values, out, k);
  return cudaGetLastError();
}

cudaError_t gather_ids(const int32_t* local, const int32_t* indices, int32_t* out, int64_t rows, int64_t k,
                       cudaStream_t stream) {
  gather_kernel<<<u32((rows + kGlueThreads - 1) / kGlueThreads), kGlueThreads, 0, stream>>>(local, indices, out, rows,
                                                                                             k);
  return cudaGetLastError();
}

cudaError_t widen_ids(const int32_t* in, int64_t* out, int64_t count, cudaStream_t stream) {
  const int64_t blocks = std::min<int64_t>((count + kGlueThreads - 1) / kGlueThreads, 4096);
  widen_kernel<<<u32(blocks), kGlueThreads, 0, stream>>>(in, out, count);
  return cudaGetLastError();
}

}  // namespace kbench::backends::flashinfer::detail
