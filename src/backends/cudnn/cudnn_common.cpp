// The cuDNN backends' shared pieces (see cudnn_common.hpp), and cudnn_version_string.
#include "backends/cudnn/cudnn_common.hpp"

#include <string>

#include "backends/cudnn/cudnn_paged_decode.hpp"  // cudnn_version_string


#include <stdexcept>
#include <utility>

#include "kbench/cuda_check.hpp"

namespace kbench::backends {
namespace cudnn_detail {

std::string version_text(int64_t version) {
  return std::to_string(version / 10000) + "." + std::to_string((version % 10000) / 100) + "." +
         std::to_string(version % 100);
}

std::string cudnn_error(cudnnStatus_t status, const char* what) {
  std::string message = std::string(what) + ": " + cudnnGetErrorString(status);
  char last[1024] = {};
  cudnnGetLastErrorString(last, sizeof(last));
  if (last[0] != '\0') message += std::string(" (") + last + ")";
  return message;
}

std::string frontend_error(fe::error_t status, const char* step) {
  return std::string("cuDNN ") + step + " failed: " + status.get_message();
}

fe::DataType_t io_data_type(DType dtype) {
  return dtype == DType::bfloat16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
}

std::optional<std::string> sdpa_dtypes_unsupported(DType q_dtype, DType kv_dtype, DType out_dtype) {
  if (is_fp8(kv_dtype) && !is_fp8(q_dtype)) {
    return "fp8 KV cache: cuDNN SDPA has no mixed path for fp16/bf16 queries over an fp8 KV cache; its fp8 "
           "forward (sdpa_fp8) takes Q, K and V all in fp8 with descale/scale tensors and amax outputs, and on "
           "Hopper writes an fp8 O only (fp16/bf16 O from fp8 SDPA is Blackwell-only)";
  }
  if (is_fp8(kv_dtype) || is_fp8(q_dtype) || is_fp8(out_dtype)) {
    return "fp8: kbench's cuDNN backend runs fp16/bf16 Q, K, V and O; cuDNN's all-fp8 SDPA (sdpa_fp8, with "
           "descale/scale tensors and amax outputs) is not wired up";
  }
  if (q_dtype != DType::bfloat16 && q_dtype != DType::float16) {
    return "q dtype " + std::string(dtype_name(q_dtype)) + ": cuDNN SDPA runs float16 and bfloat16";
  }
  if (kv_dtype != q_dtype || out_dtype != q_dtype) {
    return "cuDNN SDPA needs q, kv and out in one dtype (got q " + std::string(dtype_name(q_dtype)) + ", kv " +
           std::string(dtype_name(kv_dtype)) + ", out " + std::string(dtype_name(out_dtype)) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> library_or_device_unsupported(int64_t min_version, const std::string& feature, int& sm) {
  const auto loaded = static_cast<int64_t>(cudnnGetVersion());
  if (loaded < min_version) {
    return "cuDNN " + version_text(loaded) + " is loaded; " + feature + " need cuDNN " + version_text(min_version) +
           " or newer";
  }
  int device = 0;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "no CUDA device";
  }
  int major = 0;
  int minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "cannot query the CUDA device";
  }
  sm = major * 10 + minor;
  if (major < 8) return "cuDNN SDPA needs sm_80 or newer (device is sm_" + std::to_string(sm) + ")";
  return std::nullopt;
}

Handle::Handle() {
  if (const cudnnStatus_t st = cudnnCreate(&handle_); st != CUDNN_STATUS_SUCCESS) {
    handle_ = nullptr;
    throw std::runtime_error(cudnn_error(st, "cudnnCreate"));
  }
}

Handle::~Handle() {
  if (handle_ != nullptr) cudnnDestroy(handle_);
}

Handle::Handle(Handle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) cudnnDestroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

TensorPtr add_int32_tensor(fe::graph::Graph& graph, const char* name, int64_t uid, std::vector<int64_t> dim,
                           std::vector<int64_t> stride) {
  return graph.tensor(fe::graph::Tensor_attributes()
                          .set_name(name)
                          .set_uid(uid)
                          .set_data_type(fe::DataType_t::INT32)
                          .set_dim(std::move(dim))
                          .set_stride(std::move(stride)));
}

TensorPtr add_int32_per_batch(fe::graph::Graph& graph, const char* name, int64_t uid, int64_t n) {
  return add_int32_tensor(graph, name, uid, {n, 1, 1, 1}, {1, 1, 1, 1});
}

PagedKvTensors add_paged_kv(fe::graph::Graph& graph, fe::DataType_t io, const PagedKvGeometry& g,
                            const PagedKvUids& uids) {
  const int64_t page_stride = 2 * g.num_kv_heads * g.page_size * g.head_dim;
  const std::vector<int64_t> stride =
      g.layout == kernels::KvLayout::HND
          ? std::vector<int64_t>{page_stride, g.page_size * g.head_dim, g.head_dim, 1}
          : std::vector<int64_t>{page_stride, g.head_dim, g.num_kv_heads * g.head_dim, 1};
  const std::vector<int64_t> dim{g.num_pages, g.num_kv_heads, g.page_size, g.head_dim};
  auto container = [&](const char* name, int64_t uid) {
    return graph.tensor(
        fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_data_type(io).set_dim(dim).set_stride(stride));
  };
  auto table = [&](const char* name, int64_t uid) {
    return add_int32_tensor(graph, name, uid, {g.batch, 1, g.max_pages_per_request, 1},
                            {g.max_pages_per_request, g.max_pages_per_request, 1, 1});
  };
  return {container("k_container", uids.k), container("v_container", uids.v), table("page_table_k", uids.page_table_k),
          table("page_table_v", uids.page_table_v)};
}

std::optional<std::string> validation_unsupported(fe::graph::Graph& graph) {
  try {
    auto status = graph.validate();
    if (status.is_bad()) return "cuDNN frontend: " + status.get_message();
  } catch (const std::exception& e) {
    return std::string("cuDNN frontend: ") + e.what();
  }
  return std::nullopt;
}

void prepare_engines(fe::graph::Graph& graph, cudnnHandle_t handle) {
  if (auto st = graph.validate(); st.is_bad()) throw std::runtime_error(frontend_error(st, "graph validation"));
  if (auto st = graph.build_operation_graph(handle); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "operation graph build"));
  }
  if (auto st = graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "heuristics query"));
  }
  if (auto st = graph.check_support(); st.is_bad()) throw std::runtime_error(frontend_error(st, "support check"));
}

PlannedGraph::PlannedGraph(std::shared_ptr<fe::graph::Graph> graph, const std::vector<int64_t>& uids)
    : graph_(std::move(graph)) {
  fe::graph::Graph& g = *graph_;
  prepare_engines(g, handle_.get());
  if (auto st = g.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "plan build"));
  }
  int64_t workspace_size = 0;
  if (auto st = g.get_workspace_size(workspace_size); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "workspace query"));
  }
  if (workspace_size > 0) workspace_ = DeviceBuffer(static_cast<std::size_t>(workspace_size));
  // Every key exists from here on: bind() only overwrites values (no rehash, no allocation).
  for (int64_t uid : uids) variant_pack_.emplace(uid, nullptr);
}

void PlannedGraph::execute(cudaStream_t stream) {
  if (const cudnnStatus_t st = cudnnSetStream(handle_.get(), stream); st != CUDNN_STATUS_SUCCESS) {
    throw std::runtime_error(cudnn_error(st, "cudnnSetStream"));
  }
  if (auto st = graph_->execute(handle_.get(), variant_pack_, workspace_.get()); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "graph execute"));
  }
}

void upload_int32(const std::vector<int32_t>& values, int32_t* device) {
  KBENCH_CUDA_CHECK(cudaMemcpy(device, values.data(), values.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  // A pageable copy may still be in flight on the default stream; run() uses the caller's stream.
  KBENCH_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace cudnn_detail

std::string cudnn_version_string() {
  using cudnn_detail::version_text;
  return "cuDNN " + version_text(static_cast<int64_t>(cudnnGetVersion())) + " (built against " +
         version_text(CUDNN_VERSION) + "), cudnn_frontend " + std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) + "." +
         std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + "." + std::to_string(CUDNN_FRONTEND_PATCH_VERSION);
}

}  // namespace kbench::backends
