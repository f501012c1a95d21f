// FlashInfer's own sampling and top-k kernels (flashinfer/sampling.cuh, topk.cuh, air_top_p.cuh of
// flashinfer-python 0.7.2.post1) as the `flashinfer` yardstick backend of the sampling family, called
// as flashinfer's Python API calls them at the reference's HEAD (deterministic samplers, seed and
// offset from device memory, FlashInfer's 1 MB radix row-state buffer). Where the Python API puts
// torch ops between FlashInfer's kernels (a cast of bfloat16 logits to float32, the renormalisation
// and gather of the top_k_first fast path, torch.softmax), small kbench kernels or FlashInfer's own
// softmax stand in (sampling_float.cu says which). No FlashInfer header here.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kbench/dtype.hpp"

namespace kbench::backends::flashinfer {

enum class SamplingOp {
  softmax,
  sampling_from_probs,
  sampling_from_logits,
  top_k_sampling,
  top_p_sampling,
  top_k_top_p_from_probs,
  top_k_top_p_from_logits,
  min_p_sampling,
  top_k_renorm,
  top_p_renorm,
  top_k_mask,
  chain_speculative,
  top_k,
  page_table_transform,
  ragged_transform,
};

struct SamplingShape {
  SamplingOp op = SamplingOp::softmax;
  DType dtype = DType::float32;  // of the input (float32 for the probabilities routines)
  int64_t rows = 0;
  int64_t cols = 0;   // vocab, or max_len for the transforms
  int64_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float temperature = 1.0f;
  bool joint = false;  // top_k_top_p: filter_apply_order joint
  int64_t n = 0;       // chain: speculative tokens
  bool enable_pdl = false;  // softmax
};

// Device tensors of one call (row-major, contiguous; ids int32 as FlashInfer writes them).
struct SamplingTensors {
  const void* input = nullptr;         // probs / logits / scores; chain: draft probs [rows][n][cols]
  const int32_t* draft_ids = nullptr;  // chain [rows][n]
  const float* target = nullptr;       // chain [rows][n + 1][cols]
  const uint64_t* rng = nullptr;       // {seed, offset}: FlashInfer's seed_arr and offset_arr
  void* output = nullptr;              // samples int32 [rows]; softmax / renorm / mask [rows][cols]; top_k values
                                       // [rows][k]; transforms int32 [rows][k]; chain ids [rows][n + 1]
  int64_t* indices = nullptr;          // top_k [rows][k]
  int32_t* accepted = nullptr;         // chain [rows]
  int32_t* emitted = nullptr;          // chain [rows]
  const int32_t* page_table = nullptr;  // [rows][cols]
  const int32_t* lengths = nullptr;     // transforms [rows]
  const int32_t* offsets = nullptr;     // ragged [rows]
};

// nullopt when Sampling can run the shape (nothing allocated, no pointer looked at); else a reason.
[[nodiscard]] std::optional<std::string> sampling_unsupported(const SamplingShape& shape);

// The workspaces of one shape, allocated (and FlashInfer's row states zeroed) at construction;
// run() enqueues one call: no allocation, no synchronisation, CUDA-graph capturable.
class Sampling {
 public:
  Sampling(const SamplingShape& shape, cudaStream_t stream);
  ~Sampling();
  Sampling(Sampling&&) noexcept;
  Sampling& operator=(Sampling&&) noexcept;
  [[nodiscard]] cudaError_t run(const SamplingTensors& tensors, cudaStream_t stream) const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kbench::backends::flashinfer
