// cuDNN paged decode (see cudnn_paged_decode.hpp). With KBENCH_HAVE_CUDNN: a cudnn_frontend graph
// holding one SDPA forward node whose K and V are page containers addressed through page tables;
// without it: a stub that reports "kbench was built without cuDNN".
//
// The graph, for b = batch, hq / hk = query / kv heads, d = head_dim, P = page_size, N = num_pages,
// T = max_pages_per_request (strides in elements):
//   Q      [b, hq, 1, d]  strides [hq*d, d, hq*d, 1]           (BSHD with S = 1)
//   K, V   [N, hk, P, d]  HND strides [2*hk*P*d, P*d, d, 1]     (containers; V = cache + hk*P*d)
//                         NHD strides [2*hk*P*d, d, hk*d, 1]
//   page tables K and V   [b, 1, T, 1] int32 strides [T, T, 1, 1]  (both bound to the block table)
//   seq_len_q, seq_len_kv [b, 1, 1, 1] int32                       (padding mask)
//   O      [b, hq, 1, d]  strides [hq*d, d, hq*d, 1]
// with max_seq_len_kv = T * P, attention scale sm_scale, fp32 softmax and accumulation, no stats.
#include "backends/cudnn/cudnn_paged_decode.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"

#ifdef KBENCH_HAVE_CUDNN

#include <cudnn.h>
#include <cudnn_frontend.h>

#include <memory>
#include <unordered_map>
#include <vector>

namespace kbench::backends {
namespace {

namespace fe = cudnn_frontend;

// Paged caches (the page-table attributes of the SDPA node) arrived in cuDNN 9.5.0.
constexpr int64_t kMinCudnnVersion = 90500;

enum Uid : int64_t {
  kUidQ = 1,
  kUidK,
  kUidV,
  kUidO,
  kUidSeqLenQ,
  kUidSeqLenKv,
  kUidPageTableK,
  kUidPageTableV,
};

std::string version_text(int64_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
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

// sm_version > 0 names the target architecture (e.g. 90) instead of the current device's.
std::shared_ptr<fe::graph::Graph> make_graph(const CudnnPagedDecodeShape& s, int sm_version = 0) {
  const fe::DataType_t io = s.q_dtype == DType::bfloat16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
  const int64_t b = s.batch;
  const int64_t hq = s.num_qo_heads;
  const int64_t hk = s.num_kv_heads;
  const int64_t d = s.head_dim;
  const int64_t page = s.page_size;
  const int64_t pages = s.num_pages;
  const int64_t table = s.max_pages_per_request;

  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_name("kbench_paged_decode")
      .set_io_data_type(io)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  if (sm_version > 0) graph->set_sm_version(sm_version);  // before the nodes, which copy the context

  using fe::graph::Tensor_attributes;
  auto q = graph->tensor(Tensor_attributes()
                             .set_name("q")
                             .set_uid(kUidQ)
                             .set_data_type(io)
                             .set_dim({b, hq, 1, d})
                             .set_stride({hq * d, d, hq * d, 1}));

  const int64_t page_stride = 2 * hk * page * d;
  const std::vector<int64_t> kv_stride = s.layout == kernels::KvLayout::HND
                                             ? std::vector<int64_t>{page_stride, page * d, d, 1}
                                             : std::vector<int64_t>{page_stride, d, hk * d, 1};
  auto k = graph->tensor(Tensor_attributes()
                             .set_name("k_container")
                             .set_uid(kUidK)
                             .set_data_type(io)
                             .set_dim({pages, hk, page, d})
                             .set_stride(kv_stride));
  auto v = graph->tensor(Tensor_attributes()
                             .set_name("v_container")
                             .set_uid(kUidV)
                             .set_data_type(io)
                             .set_dim({pages, hk, page, d})
                             .set_stride(kv_stride));

  auto int_tensor = [&](const char* name, int64_t uid, std::vector<int64_t> dim, std::vector<int64_t> stride) {
    return graph->tensor(Tensor_attributes()
                             .set_name(name)
                             .set_uid(uid)
                             .set_data_type(fe::DataType_t::INT32)
                             .set_dim(std::move(dim))
                             .set_stride(std::move(stride)));
  };
  auto seq_len_q = int_tensor("seq_len_q", kUidSeqLenQ, {b, 1, 1, 1}, {1, 1, 1, 1});
  auto seq_len_kv = int_tensor("seq_len_kv", kUidSeqLenKv, {b, 1, 1, 1}, {1, 1, 1, 1});
  auto page_table_k = int_tensor("page_table_k", kUidPageTableK, {b, 1, table, 1}, {table, table, 1, 1});
  auto page_table_v = int_tensor("page_table_v", kUidPageTableV, {b, 1, table, 1}, {table, table, 1, 1});

  auto options = fe::graph::SDPA_attributes()
                     .set_name("paged_decode")
                     .set_generate_stats(false)
                     .set_attn_scale(s.sm_scale)
                     .set_padding_mask(true)
                     .set_seq_len_q(seq_len_q)
                     .set_seq_len_kv(seq_len_kv)
                     .set_paged_attention_k_table(page_table_k)
                     .set_paged_attention_v_table(page_table_v)
                     .set_paged_attention_max_seq_len_kv(static_cast<int>(table * page));

  auto [o, stats] = graph->sdpa(q, k, v, options);
  (void)stats;  // null: no stats in inference
  o->set_output(true).set_uid(kUidO).set_data_type(io).set_dim({b, hq, 1, d}).set_stride({hq * d, d, hq * d, 1});
  return graph;
}

// The checks that need neither a handle nor a plan.
std::optional<std::string> static_unsupported(const CudnnPagedDecodeShape& s) {
  if (s.batch <= 0 || s.num_qo_heads <= 0 || s.num_kv_heads <= 0 || s.head_dim <= 0 || s.page_size <= 0 ||
      s.num_pages <= 0 || s.max_pages_per_request <= 0) {
    return "empty or negative shape";
  }
  if (s.num_qo_heads % s.num_kv_heads != 0) {
    return "num_qo_heads (" + std::to_string(s.num_qo_heads) + ") is not a multiple of num_kv_heads (" +
           std::to_string(s.num_kv_heads) + ")";
  }
  if (is_fp8(s.kv_dtype) && !is_fp8(s.q_dtype)) {
    return "fp8 KV cache: cuDNN SDPA has no mixed path for fp16/bf16 queries over an fp8 KV cache; its fp8 "
           "forward (sdpa_fp8) takes Q, K and V all in fp8 with descale/scale tensors and amax outputs, and on "
           "Hopper writes an fp8 O only (fp16/bf16 O from fp8 SDPA is Blackwell-only)";
  }
  if (is_fp8(s.kv_dtype) || is_fp8(s.q_dtype) || is_fp8(s.out_dtype)) {
    return "fp8: kbench's cuDNN backend runs fp16/bf16 Q, K, V and O; cuDNN's all-fp8 SDPA (sdpa_fp8, with "
           "descale/scale tensors and amax outputs) is not wired up";
  }
  if (s.q_dtype != DType::bfloat16 && s.q_dtype != DType::float16) {
    return "q dtype " + std::string(dtype_name(s.q_dtype)) + ": cuDNN SDPA runs float16 and bfloat16";
  }
  if (s.kv_dtype != s.q_dtype || s.out_dtype != s.q_dtype) {
    return "cuDNN SDPA needs q, kv and out in one dtype (got q " + std::string(dtype_name(s.q_dtype)) + ", kv " +
           std::string(dtype_name(s.kv_dtype)) + ", out " + std::string(dtype_name(s.out_dtype)) + ")";
  }
  if (s.head_dim % 8 != 0 || s.head_dim > 256) {
    return "head_dim " + std::to_string(s.head_dim) + ": cuDNN fp16/bf16 SDPA needs a multiple of 8, at most 256";
  }
  const int64_t max_seq_len_kv = static_cast<int64_t>(s.max_pages_per_request) * s.page_size;
  if (max_seq_len_kv > INT32_MAX) return "max_pages_per_request * page_size exceeds int32";
  return std::nullopt;
}

// The version and device checks: nullopt where the loaded library and the current device can run
// paged SDPA at all.
std::optional<std::string> runtime_unsupported(const CudnnPagedDecodeShape& s) {
  const auto loaded = static_cast<int64_t>(cudnnGetVersion());
  if (loaded < kMinCudnnVersion) {
    return "cuDNN " + version_text(loaded) + " is loaded; paged caches in SDPA need cuDNN " +
           version_text(kMinCudnnVersion) + " or newer";
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
  if (major < 8) {
    return "cuDNN SDPA needs sm_80 or newer (device is sm_" + std::to_string(major * 10 + minor) + ")";
  }
  // cuDNN's support matrix for decode (s_q = 1): head_dim <= 256 on Hopper, <= 128 elsewhere.
  if (major != 9 && s.head_dim > 128) {
    return "head_dim " + std::to_string(s.head_dim) + ": cuDNN SDPA decode supports head_dim <= 128 on sm_" +
           std::to_string(major * 10 + minor) + " (<= 256 on Hopper only)";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> cudnn_paged_decode_unsupported(const CudnnPagedDecodeShape& shape) {
  if (auto why = static_unsupported(shape)) return why;
  if (auto why = runtime_unsupported(shape)) return why;
  // The frontend's own support-surface checks (per cuDNN version and architecture): host-only.
  try {
    auto graph = make_graph(shape);
    auto status = graph->validate();
    if (status.is_bad()) return "cuDNN frontend: " + status.get_message();
  } catch (const std::exception& e) {
    return std::string("cuDNN frontend: ") + e.what();
  }
  return std::nullopt;
}

std::string cudnn_version_string() {
  return "cuDNN " + version_text(static_cast<int64_t>(cudnnGetVersion())) + " (built against " +
         version_text(CUDNN_VERSION) + "), cudnn_frontend " + std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) + "." +
         std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + "." + std::to_string(CUDNN_FRONTEND_PATCH_VERSION);
}

struct CudnnPagedDecode::Impl {
  CudnnPagedDecodeShape shape;
  cudnnHandle_t handle = nullptr;
  std::shared_ptr<fe::graph::Graph> graph;  // its plans refer to `handle`: released first
  DeviceBuffer workspace;
  DeviceBuffer seq_len_q_ones;
  std::size_t v_offset_bytes = 0;  // V container = cache + hk * P * d elements
  std::unordered_map<int64_t, void*> variant_pack;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    graph.reset();
    if (handle != nullptr) cudnnDestroy(handle);
  }
};

CudnnPagedDecode::CudnnPagedDecode(const CudnnPagedDecodeShape& shape) : impl_(std::make_unique<Impl>()) {
  if (auto why = cudnn_paged_decode_unsupported(shape)) {
    throw std::runtime_error("cuDNN paged decode unsupported: " + *why);
  }
  Impl& m = *impl_;
  m.shape = shape;
  if (const cudnnStatus_t st = cudnnCreate(&m.handle); st != CUDNN_STATUS_SUCCESS) {
    m.handle = nullptr;
    throw std::runtime_error(cudnn_error(st, "cudnnCreate"));
  }

  try {
    m.graph = make_graph(shape);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cuDNN graph construction failed: ") + e.what());
  }
  fe::graph::Graph& g = *m.graph;
  if (auto st = g.validate(); st.is_bad()) throw std::runtime_error(frontend_error(st, "graph validation"));
  if (auto st = g.build_operation_graph(m.handle); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "operation graph build"));
  }
  if (auto st = g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "heuristics query"));
  }
  if (auto st = g.check_support(); st.is_bad()) throw std::runtime_error(frontend_error(st, "support check"));
  if (auto st = g.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "plan build"));
  }

  int64_t workspace_size = 0;
  if (auto st = g.get_workspace_size(workspace_size); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "workspace query"));
  }
  if (workspace_size > 0) m.workspace = DeviceBuffer(static_cast<std::size_t>(workspace_size));

  const std::vector<int32_t> ones(static_cast<std::size_t>(shape.batch), 1);
  m.seq_len_q_ones = DeviceBuffer(ones.size() * sizeof(int32_t));
  KBENCH_CUDA_CHECK(
      cudaMemcpy(m.seq_len_q_ones.get(), ones.data(), ones.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  // A pageable copy may still be in flight on the default stream; run() uses the caller's stream.
  KBENCH_CUDA_CHECK(cudaDeviceSynchronize());

  m.v_offset_bytes =
      static_cast<std::size_t>(shape.num_kv_heads) * shape.page_size * shape.head_dim * dtype_size(shape.kv_dtype);
  // Every key exists from here on: run() only overwrites the values, no rehash, no allocation.
  for (int64_t uid : {kUidQ, kUidK, kUidV, kUidO, kUidSeqLenQ, kUidSeqLenKv, kUidPageTableK, kUidPageTableV}) {
    m.variant_pack.emplace(uid, nullptr);
  }
}

CudnnPagedDecode::~CudnnPagedDecode() = default;
CudnnPagedDecode::CudnnPagedDecode(CudnnPagedDecode&&) noexcept = default;
CudnnPagedDecode& CudnnPagedDecode::operator=(CudnnPagedDecode&&) noexcept = default;

void CudnnPagedDecode::run(const void* q, const void* kv_cache, const int32_t* block_table, const int32_t* seq_len_kv,
                           const int32_t* seq_len_q_ones, void* out, cudaStream_t stream) {
  Impl& m = *impl_;
  if (const cudnnStatus_t st = cudnnSetStream(m.handle, stream); st != CUDNN_STATUS_SUCCESS) {
    throw std::runtime_error(cudnn_error(st, "cudnnSetStream"));
  }
  auto* cache = const_cast<char*>(static_cast<const char*>(kv_cache));
  auto* table = const_cast<int32_t*>(block_table);
  m.variant_pack[kUidQ] = const_cast<void*>(q);
  m.variant_pack[kUidK] = cache;
  m.variant_pack[kUidV] = cache + m.v_offset_bytes;
  m.variant_pack[kUidO] = out;
  m.variant_pack[kUidSeqLenQ] =
      seq_len_q_ones != nullptr ? const_cast<int32_t*>(seq_len_q_ones) : m.seq_len_q_ones.get();
  m.variant_pack[kUidSeqLenKv] = const_cast<int32_t*>(seq_len_kv);
  m.variant_pack[kUidPageTableK] = table;
  m.variant_pack[kUidPageTableV] = table;
  if (auto st = m.graph->execute(m.handle, m.variant_pack, m.workspace.get()); st.is_bad()) {
    throw std::runtime_error(frontend_error(st, "SDPA execute"));
  }
}

const CudnnPagedDecodeShape& CudnnPagedDecode::shape() const noexcept { return impl_->shape; }
std::size_t CudnnPagedDecode::workspace_bytes() const noexcept { return impl_->workspace.bytes(); }

}  // namespace kbench::backends

#else  // !KBENCH_HAVE_CUDNN: the stub, so that kbench builds with the CUDA toolkit alone.

namespace kbench::backends {

namespace {
#ifdef KBENCH_CUDNN_MISSING
constexpr const char* kNotBuilt = "kbench was built without cuDNN (" KBENCH_CUDNN_MISSING ")";
#else
constexpr const char* kNotBuilt = "kbench was built without cuDNN";
#endif
}  // namespace

std::optional<std::string> cudnn_paged_decode_unsupported(const CudnnPagedDecodeShape&) { return kNotBuilt; }

std::string cudnn_version_string() { return kNotBuilt; }

struct CudnnPagedDecode::Impl {
  CudnnPagedDecodeShape shape;
};

CudnnPagedDecode::CudnnPagedDecode(const CudnnPagedDecodeShape&) { throw std::runtime_error(kNotBuilt); }
CudnnPagedDecode::~CudnnPagedDecode() = default;
CudnnPagedDecode::CudnnPagedDecode(CudnnPagedDecode&&) noexcept = default;
CudnnPagedDecode& CudnnPagedDecode::operator=(CudnnPagedDecode&&) noexcept = default;

void CudnnPagedDecode::run(const void*, const void*, const int32_t*, const int32_t*, const int32_t*, void*,
                           cudaStream_t) {
  throw std::runtime_error(kNotBuilt);
}

const CudnnPagedDecodeShape& CudnnPagedDecode::shape() const noexcept { return impl_->shape; }
std::size_t CudnnPagedDecode::workspace_bytes() const noexcept { return 0; }

}  // namespace kbench::backends

#endif  // KBENCH_HAVE_CUDNN
