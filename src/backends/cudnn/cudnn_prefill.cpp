// cuDNN prefill (see cudnn_prefill.hpp): a cudnn_frontend graph holding one
// SDPA forward node on ragged (THD) Q and O, with ragged K/V or K/V page containers addressed through
// page tables.
//
// The graph, for b = batch, hq / hk = query / kv heads, dqk / dvo = head dims, Sq / Skv = max_q_len /
// max_kv_len (the padded dims), P = page_size, N = num_pages, T = max_pages_per_request (strides in
// elements; a ragged offset replaces the batch stride: request r starts at offset[r] elements):
//   Q      [b, hq, Sq, dqk]   strides [Sq*hq*dqk, dqk, hq*dqk, 1]   ragged offsets qo_indptr * hq*dqk
//   O      [b, hq, Sq, dvo]   strides [Sq*hq*dvo, dvo, hq*dvo, 1]   ragged offsets qo_indptr * hq*dvo
//   ragged K [b, hk, Skv, dqk] strides [Skv*hk*dqk, dqk, hk*dqk, 1] ragged offsets kv_indptr * hk*dqk
//          V [b, hk, Skv, dvo] strides [Skv*hk*dvo, dvo, hk*dvo, 1] ragged offsets kv_indptr * hk*dvo
//   paged  K, V [N, hk, P, d] containers of the interleaved cache and page tables [b, 1, T, 1] (as the
//          decode backend: cudnn_common's add_paged_kv), max_seq_len_kv = Skv
//   seq_len_q, seq_len_kv [b, 1, 1, 1] int32 (padding mask); ragged offsets [b + 1, 1, 1, 1] int32
// causal: the diagonal aligned bottom-right per request (key j visible to query i when
// j <= i + kv_len - q_len). Attention scale sm_scale, fp32 softmax and accumulation, no stats.
#include "backends/cudnn/cudnn_prefill.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "backends/cudnn/cudnn_common.hpp"


#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <memory>
#include <vector>

#include "kbench/device_buffer.hpp"

namespace kbench::backends {
namespace {

namespace fe = cudnn_frontend;
using namespace cudnn_detail;

// Ragged (THD) Q/O with a padding mask: cuDNN 9.0; paged caches combined with ragged offsets: 9.7
// (the frontend's gate).
constexpr int64_t kMinCudnnVersionRagged = 90000;
constexpr int64_t kMinCudnnVersionPaged = 90700;

enum Uid : int64_t {
  kUidQ = 1,
  kUidK,
  kUidV,
  kUidO,
  kUidSeqLenQ,
  kUidSeqLenKv,
  kUidQOffsets,
  kUidOOffsets,
  kUidKOffsets,
  kUidVOffsets,
  kUidPageTableK,
  kUidPageTableV,
};

// The device int32 arrays the backend owns, as segments of one buffer, each on a 128-byte boundary
// (cuDNN wants its tensors' addresses aligned).
enum Segment : int { kSeqLenQ, kSeqLenKv, kQOffsets, kOOffsets, kKOffsets, kVOffsets, kSegments };
constexpr std::size_t kSegmentAlignInts = 32;

int32_t q_len(const CudnnPrefillShape& s, int b) { return s.qo_indptr[b + 1] - s.qo_indptr[b]; }
int32_t kv_len(const CudnnPrefillShape& s, int b) { return s.kv_indptr[b + 1] - s.kv_indptr[b]; }

PagedKvGeometry paged_geometry(const CudnnPrefillShape& s) {
  return {s.layout, s.num_pages, s.num_kv_heads, s.page_size, s.head_dim_qk, s.batch, s.max_pages_per_request};
}

std::shared_ptr<fe::graph::Graph> make_graph(const CudnnPrefillShape& s) {
  const fe::DataType_t io = io_data_type(s.q_dtype);
  const int64_t b = s.batch;
  const int64_t hq = s.num_qo_heads;
  const int64_t hk = s.num_kv_heads;
  const int64_t dqk = s.head_dim_qk;
  const int64_t dvo = s.head_dim_vo;
  const int64_t sq = s.max_q_len;
  const int64_t skv = s.max_kv_len;

  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_name("kbench_prefill")
      .set_io_data_type(io)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);

  auto offsets = [&](const char* name, int64_t uid) { return add_int32_per_batch(*graph, name, uid, b + 1); };
  // A token-major ragged tensor [b, heads, max_len, d] (BSHD strides, each request at its offset).
  auto ragged = [&](const char* name, int64_t uid, int64_t heads, int64_t max_len, int64_t d, const TensorPtr& off) {
    return fe::graph::Tensor_attributes()
        .set_name(name)
        .set_uid(uid)
        .set_data_type(io)
        .set_dim({b, heads, max_len, d})
        .set_stride({max_len * heads * d, d, heads * d, 1})
        .set_ragged_offset(off);
  };

  auto q = graph->tensor(ragged("q", kUidQ, hq, sq, dqk, offsets("q_offsets", kUidQOffsets)));
  auto seq_len_q = add_int32_per_batch(*graph, "seq_len_q", kUidSeqLenQ, b);
  auto seq_len_kv = add_int32_per_batch(*graph, "seq_len_kv", kUidSeqLenKv, b);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("prefill")
                     .set_generate_stats(false)
                     .set_attn_scale(s.sm_scale)
                     .set_padding_mask(true)
                     .set_seq_len_q(seq_len_q)
                     .set_seq_len_kv(seq_len_kv);
  if (s.causal) options.set_causal_mask_bottom_right(true);

  TensorPtr k;
  TensorPtr v;
  if (s.paged) {
    const PagedKvTensors kv =
        add_paged_kv(*graph, io, paged_geometry(s), {kUidK, kUidV, kUidPageTableK, kUidPageTableV});
    k = kv.k;
    v = kv.v;
    options.set_paged_attention_k_table(kv.page_table_k)
        .set_paged_attention_v_table(kv.page_table_v)
        .set_paged_attention_max_seq_len_kv(static_cast<int>(skv));
  } else {
    k = graph->tensor(ragged("k", kUidK, hk, skv, dqk, offsets("k_offsets", kUidKOffsets)));
    v = graph->tensor(ragged("v", kUidV, hk, skv, dvo, offsets("v_offsets", kUidVOffsets)));
  }

  auto [o, stats] = graph->sdpa(q, k, v, options);
  (void)stats;  // null: no stats in inference
  o->set_output(true)
      .set_uid(kUidO)
      .set_data_type(io)
      .set_dim({b, hq, sq, dvo})
      .set_stride({sq * hq * dvo, dvo, hq * dvo, 1})
      .set_ragged_offset(offsets("o_offsets", kUidOOffsets));
  return graph;
}

std::optional<std::string> indptr_unsupported(const std::vector<int32_t>& indptr, int batch, int max_len,
                                              const char* name, const char* max_name) {
  if (indptr.size() != static_cast<std::size_t>(batch) + 1) {
    return std::string(name) + " has " + std::to_string(indptr.size()) +
           " entries, not batch + 1 = " + std::to_string(batch + 1);
  }
  for (int b = 0; b < batch; ++b) {
    const int64_t len = int64_t{indptr[b + 1]} - indptr[b];
    if (len < 0 || len > max_len) {
      return std::string(name) + ": request " + std::to_string(b) + " has length " + std::to_string(len) +
             ", outside 0.." + max_name + " (" + std::to_string(max_len) + ")";
    }
  }
  return std::nullopt;
}

// The checks that need neither the library nor a device.
std::optional<std::string> static_unsupported(const CudnnPrefillShape& s) {
  if (s.batch <= 0 || s.num_qo_heads <= 0 || s.num_kv_heads <= 0 || s.head_dim_qk <= 0 || s.head_dim_vo <= 0 ||
      s.max_q_len <= 0 || s.max_kv_len <= 0) {
    return "empty or negative shape";
  }
  if (auto why = indptr_unsupported(s.qo_indptr, s.batch, s.max_q_len, "qo_indptr", "max_q_len")) return why;
  if (auto why = indptr_unsupported(s.kv_indptr, s.batch, s.max_kv_len, "kv_indptr", "max_kv_len")) return why;
  for (int b = 0; b < s.batch; ++b) {
    if (kv_len(s, b) == 0 && q_len(s, b) > 0) {
      return "request " + std::to_string(b) +
             " has no keys: cuDNN writes NaN for its query rows (seen on H100: ragged KV with cuDNN 9.14, paged KV "
             "with 9.19), where the prefill contract writes zeros (causal rows that see no key do get zeros)";
    }
  }
  if (s.num_qo_heads % s.num_kv_heads != 0) {
    return "num_qo_heads (" + std::to_string(s.num_qo_heads) + ") is not a multiple of num_kv_heads (" +
           std::to_string(s.num_kv_heads) + ")";
  }
  if (auto why = sdpa_dtypes_unsupported(s.q_dtype, s.kv_dtype, s.out_dtype)) return why;
  for (const int d : {s.head_dim_qk, s.head_dim_vo}) {
    if (d % 8 != 0 || d > 256) {
      return "head dims " + std::to_string(s.head_dim_qk) + "/" + std::to_string(s.head_dim_vo) +
             ": cuDNN fp16/bf16 SDPA needs multiples of 8, at most 256";
    }
  }
  // Ragged offsets are int32 element offsets.
  const int64_t q_elements = int64_t{s.qo_indptr.back()} * s.num_qo_heads * std::max(s.head_dim_qk, s.head_dim_vo);
  const int64_t kv_elements = int64_t{s.kv_indptr.back()} * s.num_kv_heads * std::max(s.head_dim_qk, s.head_dim_vo);
  if (q_elements > INT32_MAX || (!s.paged && kv_elements > INT32_MAX)) {
    return "more than 2^31 elements in q, out, k or v: cuDNN's ragged offsets here are int32";
  }
  if (s.paged) {
    if (s.head_dim_qk != s.head_dim_vo) {
      return "paged KV with head_dim_qk " + std::to_string(s.head_dim_qk) + " != head_dim_vo " +
             std::to_string(s.head_dim_vo) + ": kbench's interleaved paged cache has one head dim";
    }
    if (s.page_size <= 0 || s.num_pages <= 0 || s.max_pages_per_request <= 0) return "empty or negative paged shape";
    if (int64_t{s.max_pages_per_request} * s.page_size < s.max_kv_len) {
      return "the block table (" + std::to_string(s.max_pages_per_request) + " pages of " +
             std::to_string(s.page_size) + ") is shorter than max_kv_len (" + std::to_string(s.max_kv_len) + ")";
    }
  }
  return std::nullopt;
}

// Every static, library, device and frontend check; nullopt once the engines accept the graph.
std::optional<std::string> unsupported(const CudnnPrefillShape& s, bool check_engines) {
  if (auto why = static_unsupported(s)) return why;
  int sm = 0;
  const int64_t min_version = s.paged ? kMinCudnnVersionPaged : kMinCudnnVersionRagged;
  const char* feature = s.paged ? "paged caches with ragged queries in SDPA" : "ragged (THD) tensors in SDPA";
  if (auto why = library_or_device_unsupported(min_version, feature, sm)) return why;
  try {
    auto graph = make_graph(s);
    if (auto why = validation_unsupported(*graph)) return why;
    if (check_engines) {
      // No engine for the graph (an unsupported mask/layout combination on this cuDNN and GPU) shows
      // only here: ask with a handle of our own.
      const Handle handle;
      prepare_engines(*graph, handle.get());
    }
  } catch (const std::exception& e) {
    return std::string("cuDNN: ") + e.what();
  }
  return std::nullopt;
}

// Host copies of the arrays the backend owns on the device: sequence lengths and the element
// offsets of the ragged tensors, each segment at a multiple of kSegmentAlignInts.
std::vector<int32_t> device_arrays(const CudnnPrefillShape& s, std::array<std::size_t, kSegments>& at) {
  const auto n = static_cast<std::size_t>(s.batch);
  const std::size_t stride = (n + 1 + kSegmentAlignInts - 1) / kSegmentAlignInts * kSegmentAlignInts;
  std::vector<int32_t> host(stride * kSegments, 0);
  for (int i = 0; i < kSegments; ++i) at[i] = stride * i;
  auto scaled = [&](Segment seg, const std::vector<int32_t>& indptr, int64_t per_token) {
    for (std::size_t r = 0; r <= n; ++r) host[at[seg] + r] = static_cast<int32_t>(indptr[r] * per_token);
  };
  for (int b = 0; b < s.batch; ++b) {
    host[at[kSeqLenQ] + b] = q_len(s, b);
    host[at[kSeqLenKv] + b] = kv_len(s, b);
  }
  scaled(kQOffsets, s.qo_indptr, int64_t{s.num_qo_heads} * s.head_dim_qk);
  scaled(kOOffsets, s.qo_indptr, int64_t{s.num_qo_heads} * s.head_dim_vo);
  if (!s.paged) {
    scaled(kKOffsets, s.kv_indptr, int64_t{s.num_kv_heads} * s.head_dim_qk);
    scaled(kVOffsets, s.kv_indptr, int64_t{s.num_kv_heads} * s.head_dim_vo);
  }
  return host;
}

}  // namespace

std::optional<std::string> cudnn_prefill_unsupported(const CudnnPrefillShape& shape) {
  return unsupported(shape, /*check_engines=*/true);
}

struct CudnnPrefill::Impl {
  CudnnPrefillShape shape;
  std::unique_ptr<PlannedGraph> planned;
  DeviceBuffer arrays;  // the Segment arrays
  std::array<std::size_t, kSegments> segment_at{};
  std::size_t v_offset_bytes = 0;  // paged: V container = cache + hk * P * d elements

  [[nodiscard]] const int32_t* segment(Segment seg) const { return arrays.as<int32_t>() + segment_at[seg]; }
};

CudnnPrefill::CudnnPrefill(const CudnnPrefillShape& shape) : impl_(std::make_unique<Impl>()) {
  // The engines are checked below, by planning.
  if (auto why = unsupported(shape, /*check_engines=*/false)) {
    throw std::runtime_error("cuDNN prefill unsupported: " + *why);
  }
  Impl& m = *impl_;
  m.shape = shape;
  std::shared_ptr<fe::graph::Graph> graph;
  try {
    graph = make_graph(shape);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cuDNN graph construction failed: ") + e.what());
  }
  std::vector<int64_t> uids{kUidQ, kUidK, kUidV, kUidO, kUidSeqLenQ, kUidSeqLenKv, kUidQOffsets, kUidOOffsets};
  if (shape.paged) {
    uids.insert(uids.end(), {kUidPageTableK, kUidPageTableV});
    m.v_offset_bytes = paged_geometry(shape).v_offset_bytes(shape.kv_dtype);
  } else {
    uids.insert(uids.end(), {kUidKOffsets, kUidVOffsets});
  }
  m.planned = std::make_unique<PlannedGraph>(std::move(graph), uids);

  const std::vector<int32_t> host = device_arrays(shape, m.segment_at);
  m.arrays = DeviceBuffer(host.size() * sizeof(int32_t));
  upload_int32(host, m.arrays.as<int32_t>());
}

CudnnPrefill::~CudnnPrefill() = default;
CudnnPrefill::CudnnPrefill(CudnnPrefill&&) noexcept = default;
CudnnPrefill& CudnnPrefill::operator=(CudnnPrefill&&) noexcept = default;

void CudnnPrefill::run(const CudnnPrefillData& data, cudaStream_t stream) {
  Impl& m = *impl_;
  const bool paged = m.shape.paged;
  if (data.q == nullptr || data.out == nullptr ||
      (paged ? data.kv_cache == nullptr || data.block_table == nullptr : data.k == nullptr || data.v == nullptr)) {
    throw std::runtime_error(paged ? "cuDNN prefill: q, kv_cache, block_table and out must be set"
                                   : "cuDNN prefill: q, k, v and out must be set");
  }
  PlannedGraph& g = *m.planned;
  g.bind(kUidQ, data.q);
  g.bind(kUidO, data.out);
  g.bind(kUidSeqLenQ, m.segment(kSeqLenQ));
  g.bind(kUidSeqLenKv, m.segment(kSeqLenKv));
  g.bind(kUidQOffsets, m.segment(kQOffsets));
  g.bind(kUidOOffsets, m.segment(kOOffsets));
  if (paged) {
    const char* cache = static_cast<const char*>(data.kv_cache);
    g.bind(kUidK, cache);
    g.bind(kUidV, cache + m.v_offset_bytes);
    g.bind(kUidPageTableK, data.block_table);
    g.bind(kUidPageTableV, data.block_table);
  } else {
    g.bind(kUidK, data.k);
    g.bind(kUidV, data.v);
    g.bind(kUidKOffsets, m.segment(kKOffsets));
    g.bind(kUidVOffsets, m.segment(kVOffsets));
  }
  g.execute(stream);
}

const CudnnPrefillShape& CudnnPrefill::shape() const noexcept { return impl_->shape; }
std::size_t CudnnPrefill::workspace_bytes() const noexcept { return impl_->planned->workspace_bytes(); }

}  // namespace kbench::backends
