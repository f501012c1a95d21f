// cuDNN paged decode (see cudnn_paged_decode.hpp): a cudnn_frontend graph holding one SDPA forward
// node whose K and V are page containers addressed through page tables.
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

#include "backends/cudnn/cudnn_common.hpp"


#include <memory>
#include <vector>

#include "kbench/device_buffer.hpp"

namespace kbench::backends {
namespace {

namespace fe = cudnn_frontend;
using namespace cudnn_detail;

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

PagedKvGeometry paged_geometry(const CudnnPagedDecodeShape& s) {
  return {s.layout, s.num_pages, s.num_kv_heads, s.page_size, s.head_dim, s.batch, s.max_pages_per_request};
}

std::shared_ptr<fe::graph::Graph> make_graph(const CudnnPagedDecodeShape& s) {
  const fe::DataType_t io = io_data_type(s.q_dtype);
  const int64_t b = s.batch;
  const int64_t hq = s.num_qo_heads;
  const int64_t d = s.head_dim;
  const PagedKvGeometry paged = paged_geometry(s);
  const auto max_seq_len_kv = static_cast<int>(paged.max_pages_per_request * paged.page_size);

  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_name("kbench_paged_decode")
      .set_io_data_type(io)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);

  auto q = graph->tensor(fe::graph::Tensor_attributes()
                             .set_name("q")
                             .set_uid(kUidQ)
                             .set_data_type(io)
                             .set_dim({b, hq, 1, d})
                             .set_stride({hq * d, d, hq * d, 1}));
  const PagedKvTensors kv = add_paged_kv(*graph, io, paged, {kUidK, kUidV, kUidPageTableK, kUidPageTableV});
  auto seq_len_q = add_int32_per_batch(*graph, "seq_len_q", kUidSeqLenQ, b);
  auto seq_len_kv = add_int32_per_batch(*graph, "seq_len_kv", kUidSeqLenKv, b);

  auto options = fe::graph::SDPA_attributes()
                     .set_name("paged_decode")
                     .set_generate_stats(false)
                     .set_attn_scale(s.sm_scale)
                     .set_padding_mask(true)
                     .set_seq_len_q(seq_len_q)
                     .set_seq_len_kv(seq_len_kv)
                     .set_paged_attention_k_table(kv.page_table_k)
                     .set_paged_attention_v_table(kv.page_table_v)
                     .set_paged_attention_max_seq_len_kv(max_seq_len_kv);

  auto [o, stats] = graph->sdpa(q, kv.k, kv.v, options);
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
  if (auto why = sdpa_dtypes_unsupported(s.q_dtype, s.kv_dtype, s.out_dtype)) return why;
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
  int sm = 0;
  if (auto why = library_or_device_unsupported(kMinCudnnVersion, "paged caches in SDPA", sm)) return why;
  // cuDNN's support matrix for decode (s_q = 1): head_dim <= 256 on Hopper, <= 128 elsewhere.
  if (sm / 10 != 9 && s.head_dim > 128) {
    return "head_dim " + std::to_string(s.head_dim) + ": cuDNN SDPA decode supports head_dim <= 128 on sm_" +
           std::to_string(sm) + " (<= 256 on Hopper only)";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> cudnn_paged_decode_unsupported(const CudnnPagedDecodeShape& shape) {
  if (auto why = static_unsupported(shape)) return why;
  if (auto why = runtime_unsupported(shape)) return why;
  // The frontend's own support-surface checks (per cuDNN version and architecture): host-only.
  try {
    return validation_unsupported(*make_graph(shape));
  } catch (const std::exception& e) {
    return std::string("cuDNN frontend: ") + e.what();
  }
}

struct CudnnPagedDecode::Impl {
  CudnnPagedDecodeShape shape;
  std::unique_ptr<PlannedGraph> planned;
  DeviceBuffer seq_len_q_ones;
  std::size_t v_offset_bytes = 0;  // V container = cache + hk * P * d elements
};

CudnnPagedDecode::CudnnPagedDecode(const CudnnPagedDecodeShape& shape) : impl_(std::make_unique<Impl>()) {
  if (auto why = cudnn_paged_decode_unsupported(shape)) {
    throw std::runtime_error("cuDNN paged decode unsupported: " + *why);
  }
  Impl& m = *impl_;
  m.shape = shape;
  std::shared_ptr<fe::graph::Graph> graph;
  try {
    graph = make_graph(shape);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cuDNN graph construction failed: ") + e.what());
  }
  m.planned = std::make_unique<PlannedGraph>(
      std::move(graph),
      std::vector<int64_t>{kUidQ, kUidK, kUidV, kUidO, kUidSeqLenQ, kUidSeqLenKv, kUidPageTableK, kUidPageTableV});
  m.seq_len_q_ones = DeviceBuffer(static_cast<std::size_t>(shape.batch) * sizeof(int32_t));
  upload_int32(std::vector<int32_t>(static_cast<std::size_t>(shape.batch), 1), m.seq_len_q_ones.as<int32_t>());
  m.v_offset_bytes = paged_geometry(shape).v_offset_bytes(shape.kv_dtype);
}

CudnnPagedDecode::~CudnnPagedDecode() = default;
CudnnPagedDecode::CudnnPagedDecode(CudnnPagedDecode&&) noexcept = default;
CudnnPagedDecode& CudnnPagedDecode::operator=(CudnnPagedDecode&&) noexcept = default;

void CudnnPagedDecode::run(const void* q, const void* kv_cache, const int32_t* block_table, const int32_t* seq_len_kv,
                           const int32_t* seq_len_q_ones, void* out, cudaStream_t stream) {
  Impl& m = *impl_;
  PlannedGraph& g = *m.planned;
  const char* cache = static_cast<const char*>(kv_cache);
  g.bind(kUidQ, q);
  g.bind(kUidK, cache);
  g.bind(kUidV, cache + m.v_offset_bytes);
  g.bind(kUidO, out);
  g.bind(kUidSeqLenQ, seq_len_q_ones != nullptr ? seq_len_q_ones : m.seq_len_q_ones.as<int32_t>());
  g.bind(kUidSeqLenKv, seq_len_kv);
  g.bind(kUidPageTableK, block_table);
  g.bind(kUidPageTableV, block_table);
  g.execute(stream);
}

const CudnnPagedDecodeShape& CudnnPagedDecode::shape() const noexcept { return impl_->shape; }
std::size_t CudnnPagedDecode::workspace_bytes() const noexcept { return impl_->planned->workspace_bytes(); }

}  // namespace kbench::backends
