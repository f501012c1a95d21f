// What the cuDNN backends (paged decode, prefill) share: the handle, dtype mapping, version and
// error text, the checks every SDPA graph needs, the paged K/V views of kbench's interleaved cache,
// and a planned frontend graph with its workspace and variant pack. Private to src/backends/cudnn:
// it includes cuDNN's headers, which the backends' public headers never do.
#pragma once

#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kbench/device_buffer.hpp"
#include "kbench/dtype.hpp"
#include "kernels/attention/kv_layout.hpp"

namespace kbench::backends::cudnn_detail {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

// 91400 -> "9.14.0" (cudnnGetVersion's and CUDNN_VERSION's encoding).
[[nodiscard]] std::string version_text(int64_t version);

// "what: CUDNN_STATUS_... (cuDNN's last error message)".
[[nodiscard]] std::string cudnn_error(cudnnStatus_t status, const char* what);

// "cuDNN <step> failed: <frontend message>".
[[nodiscard]] std::string frontend_error(fe::error_t status, const char* step);

// The SDPA I/O type of a float16 / bfloat16 tensor.
[[nodiscard]] fe::DataType_t io_data_type(DType dtype);

// Why cuDNN SDPA as kbench wires it cannot take these dtypes (fp8 anywhere, anything but one of
// float16 / bfloat16 for all three), or nullopt.
[[nodiscard]] std::optional<std::string> sdpa_dtypes_unsupported(DType q_dtype, DType kv_dtype, DType out_dtype);

// Why the loaded library (older than min_version, which `feature` needs) or the current device (none,
// or older than sm_80) cannot run SDPA, or nullopt; `sm` receives the device's version (e.g. 90).
[[nodiscard]] std::optional<std::string> library_or_device_unsupported(int64_t min_version, const std::string& feature,
                                                                       int& sm);

// An owned cudnnHandle_t (created on the current device).
class Handle {
 public:
  Handle();  // throws std::runtime_error with cuDNN's message
  ~Handle();
  Handle(Handle&& other) noexcept;
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  [[nodiscard]] cudnnHandle_t get() const noexcept { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

// An int32 tensor of the graph (lengths, offsets, page tables).
[[nodiscard]] TensorPtr add_int32_tensor(fe::graph::Graph& graph, const char* name, int64_t uid,
                                         std::vector<int64_t> dim, std::vector<int64_t> stride);

// One int32 per batch entry, [n, 1, 1, 1]: sequence lengths (n = batch), ragged offsets (batch + 1).
[[nodiscard]] TensorPtr add_int32_per_batch(fe::graph::Graph& graph, const char* name, int64_t uid, int64_t n);

// kbench's paged cache: num_pages pages, K and V interleaved per page (HND page[2][kv_head][slot][dim],
// NHD page[2][slot][kv_head][dim]), addressed through a dense block table [batch][max_pages].
struct PagedKvGeometry {
  kernels::KvLayout layout = kernels::KvLayout::NHD;
  int64_t num_pages = 0;
  int64_t num_kv_heads = 0;
  int64_t page_size = 0;
  int64_t head_dim = 0;
  int64_t batch = 0;
  int64_t max_pages_per_request = 0;

  // Where V starts in the cache: the K half of the first page.
  [[nodiscard]] std::size_t v_offset_bytes(DType kv_dtype) const {
    return static_cast<std::size_t>(num_kv_heads * page_size * head_dim) * dtype_size(kv_dtype);
  }
};

struct PagedKvTensors {
  TensorPtr k;             // container [num_pages, kv_heads, page_size, head_dim], the layout's strides
  TensorPtr v;             // the same view, bound at cache + v_offset_bytes
  TensorPtr page_table_k;  // [batch, 1, max_pages, 1] int32
  TensorPtr page_table_v;  // the same block table, bound twice
};

struct PagedKvUids {
  int64_t k, v, page_table_k, page_table_v;
};

[[nodiscard]] PagedKvTensors add_paged_kv(fe::graph::Graph& graph, fe::DataType_t io, const PagedKvGeometry& geometry,
                                          const PagedKvUids& uids);

// The graph's own validation (per cuDNN version and architecture; host only): its message, or nullopt.
[[nodiscard]] std::optional<std::string> validation_unsupported(fe::graph::Graph& graph);

// Validation, operation graph, heuristics (A, then the fallback list) and the engines' support check
// on `handle`: throws std::runtime_error with the failing step and cuDNN's message.
void prepare_engines(fe::graph::Graph& graph, cudnnHandle_t handle);

// A graph planned once with its own handle and workspace. run-time work is bind() + execute(): no
// allocation, no host synchronisation (capturable in a CUDA graph).
class PlannedGraph {
 public:
  // `uids`: every tensor execute() binds. Throws std::runtime_error (cuDNN) or kbench::CudaError.
  PlannedGraph(std::shared_ptr<fe::graph::Graph> graph, const std::vector<int64_t>& uids);

  // Sets the pointer of a uid named at construction (no insertion, no allocation).
  void bind(int64_t uid, const void* data) { variant_pack_.at(uid) = const_cast<void*>(data); }

  // Enqueues the graph on `stream`; throws std::runtime_error where cuDNN refuses.
  void execute(cudaStream_t stream);

  [[nodiscard]] std::size_t workspace_bytes() const noexcept { return workspace_.bytes(); }

 private:
  Handle handle_;
  std::shared_ptr<fe::graph::Graph> graph_;  // declared after handle_: its plans go first
  DeviceBuffer workspace_;
  std::unordered_map<int64_t, void*> variant_pack_;
};

// Copies host int32 values into `device` (at least values.size() ints) and waits for the copy:
// construction-time only.
void upload_int32(const std::vector<int32_t>& values, int32_t* device);

}  // namespace kbench::backends::cudnn_detail
