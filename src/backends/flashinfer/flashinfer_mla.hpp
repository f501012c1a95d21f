// FlashInfer's own MLA decode (flashinfer-python 0.7.2.post1, header-only kernels) as the
// `flashinfer` yardstick backend of BatchMLAPagedAttentionWrapper, on both kernels its
// BatchMLAPagedAttentionWrapper has:
//   fa2: MLAPlan + mla::BatchMLAPagedAttention (flashinfer/attention/mla.cuh), sm_80+;
//   fa3: MLAPlan + mla::BatchMLAPageAttentionHopper (flashinfer/attention/mla_hopper.cuh), sm_90 only.
// No FlashInfer or CUTLASS header is included here.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kbench/dtype.hpp"

namespace kbench::backends::flashinfer {

enum class MlaPath { fa2, fa3 };

// The case, as planned on the host. Request b has s_qo query rows (qo_indptr[b] = b * s_qo) and
// kv_len[b] >= s_qo keys in pages kv_indices[kv_indptr[b] ..), causal among the query rows
// (bottom-right aligned); softmax scale sm_scale. Caches: ckv [num_pages][page_size][head_dim_ckv],
// kpe [num_pages][page_size][head_dim_kpe]; queries q_nope / q_pe [rows][num_heads][dim]; output
// [rows][num_heads][head_dim_ckv].
struct MlaShape {
  int batch = 0;
  int s_qo = 1;
  int num_heads = 0;
  int head_dim_ckv = 0;
  int head_dim_kpe = 0;
  int page_size = 0;
  int num_pages = 0;
  DType q_dtype = DType::bfloat16;
  DType kv_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  float sm_scale = 0.f;
  std::vector<int32_t> qo_indptr;  // host, batch + 1 row offsets
  std::vector<int32_t> kv_indptr;  // host, batch + 1 page offsets
  std::vector<int32_t> kv_len;     // host, batch key counts
};

// Device pointers for one run; kv_indices must hold the page table the object was planned with.
struct MlaTensors {
  const void* q_nope = nullptr;
  const void* q_pe = nullptr;
  const void* ckv = nullptr;
  const void* kpe = nullptr;
  const int32_t* kv_indices = nullptr;
  void* out = nullptr;
};

// nullopt when Mla can run the case on the current device; otherwise a one-line reason. Cheap.
[[nodiscard]] std::optional<std::string> mla_unsupported(MlaPath path, const MlaShape& shape);

namespace detail {
class MlaImpl;
}

// Plans in the constructor (FlashInfer's MLAPlan, workspaces as it sizes them, the plan copied to
// the device, stream synchronised); throws std::runtime_error on an unsupported case or a failure.
// run() only launches (one cooperative kernel: no allocation, sync or copy): CUDA-graph capturable.
class Mla {
 public:
  Mla(MlaPath path, const MlaShape& shape, cudaStream_t stream);
  ~Mla();
  Mla(Mla&&) noexcept;
  Mla& operator=(Mla&&) noexcept;
  Mla(const Mla&) = delete;
  Mla& operator=(const Mla&) = delete;

  [[nodiscard]] cudaError_t run(const MlaTensors& tensors, cudaStream_t stream) const;
  [[nodiscard]] const std::string& plan_summary() const;

 private:
  std::unique_ptr<detail::MlaImpl> impl_;
};

}  // namespace kbench::backends::flashinfer
