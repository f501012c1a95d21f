// The row kernels' host side: plans (cluster size, threads, shared memory), parameter checks and
// launches, dispatched to the per-dtype translation units row_kernels_<dtype>.cu.
//
// Plan (tunable constants below): a CTA holds kTargetSliceBytes of the row (two to three CTAs per
// SM, so one CTA's loads overlap another's passes), the cluster size a power of two; batches too
// small to fill the GPU spread each row over more CTAs (up to 16, never slices under
// kMinSliceElements, where exchanges cost more than the pass they split); rows longer than 16 CTAs'
// shared memory are refused. Clusters above 8 CTAs (non-portable) are used only where the occupancy
// calculator says one fits; otherwise 8.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "kernels/common/kernel_image.hpp"
#include "kernels/common/launch.hpp"
#include "kernels/sampling/row_kernels.cuh"

namespace kbench::kernels::sampling {
namespace {

using namespace sampling_detail;

constexpr int64_t kTargetSliceBytes = 64 * 1024;
constexpr int64_t kMinSliceElements = 2048;
// Slices from this size get kMaxThreads threads, smaller kMinThreads: 8016-element slices (a lone
// 128256 row over 16 CTAs, batches of 32) run 9-22% faster with 256 threads than with 512
// (bench/results/h100/sampling/session12/slice_threads.md).
constexpr int64_t kLargeSliceElements = 8192;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

struct Device {
  int sms = 0;
  int smem_optin = 0;
};

cudaError_t current_device(Device* d) {
  int id = 0;
  cudaError_t status = cudaGetDevice(&id);
  if (status == cudaSuccess) status = cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, id);
  if (status == cudaSuccess) status = cudaDeviceGetAttribute(&d->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, id);
  return status;
}

int elem_bytes(DType t) { return static_cast<int>(dtype_size(t)); }

bool is_float_type(DType t) { return t == DType::float32 || t == DType::float16 || t == DType::bfloat16; }

const RowKernels* kernels_for(DType t) {
  static const RowKernels f32 = row_kernels_f32();
  static const RowKernels f16 = row_kernels_f16();
  static const RowKernels bf16 = row_kernels_bf16();
  switch (t) {
    case DType::float32: return &f32;
    case DType::float16: return &f16;
    case DType::bfloat16: return &bf16;
    default: return nullptr;
  }
}

// Whether a cluster of `plan` can be resident at all (the occupancy calculator: at least one).
bool cluster_fits(const void* kernel, const RowPlan& plan) {
  int clusters = 0;
  const cudaError_t status = max_active_clusters(kernel, plan.cluster, plan.threads, plan.smem_bytes, &clusters);
  if (status != cudaSuccess) (void)cudaGetLastError();
  return status == cudaSuccess && clusters > 0;
}

// The plan of `kernel` for rows of `cols` elements of `elem` bytes, with `buffers` slices of input
// per CTA and, where `list`, the top-k candidate list. Sets the kernel's shared-memory and cluster
// attributes (host calls, no stream work: made once per case, before any capture).
cudaError_t make_plan(const void* kernel, int elem, int buffers, bool list, int64_t rows, int64_t cols, RowPlan* out) {
  if (rows <= 0 || cols <= 0 || rows * static_cast<int64_t>(kMaxCluster) > 0x7FFFFFFF || cols > 0x7FFFFFFF) {
    return cudaErrorInvalidValue;
  }
  Device device;
  cudaError_t status = current_device(&device);
  if (status != cudaSuccess) return status;
  const int per_chunk = 16 / elem;
  const int64_t list_bytes = list ? static_cast<int64_t>(kListCapacity) * static_cast<int64_t>(sizeof(ListEntry)) : 0;
  const int64_t dynamic_limit = device.smem_optin - static_cast<int64_t>(sizeof(Shared));
  const int64_t room = (dynamic_limit - list_bytes) / buffers;
  const int64_t max_slice = (room / elem - per_chunk) / per_chunk * per_chunk;
  if (max_slice < per_chunk) return cudaErrorNotSupported;
  const int64_t need = ceil_div(cols, max_slice);
  if (need > kMaxCluster) return cudaErrorNotSupported;

  status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(dynamic_limit));
  if (status == cudaSuccess) status = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  if (status != cudaSuccess) return status;

  int64_t cluster = next_pow2(ceil_div(cols * elem, kTargetSliceBytes));
  const int64_t spread = next_pow2(ceil_div(2 * static_cast<int64_t>(device.sms), rows));
  cluster = std::max(cluster, std::min(spread, std::max<int64_t>(1, cols / kMinSliceElements)));
  cluster = std::min<int64_t>(std::max(cluster, need), kMaxCluster);
  for (;; cluster /= 2) {
    if (cluster < need) return cudaErrorNotSupported;
    RowPlan plan;
    plan.slice = ceil_div(ceil_div(cols, cluster), per_chunk) * per_chunk;
    plan.cluster = static_cast<int>(ceil_div(cols, plan.slice));
    plan.threads = plan.slice >= kLargeSliceElements ? kMaxThreads : kMinThreads;
    plan.list_capacity = list ? kListCapacity : 0;
    plan.smem_bytes = static_cast<int>(buffers * buffer_bytes(plan.slice, elem) + list_bytes);
    if (plan.cluster == 1 || cluster_fits(kernel, plan)) {
      *out = plan;
      return cudaSuccess;
    }
  }
}

bool plan_matches(const RowPlan& plan, int64_t cols) {
  const int64_t parts = plan.chunks > 0 ? plan.chunks : plan.cluster;
  return plan.cluster >= 1 && plan.cluster <= kMaxCluster && plan.slice > 0 && plan.slice * parts >= cols &&
         (plan.threads == kMinThreads || plan.threads == kMaxThreads) &&
         (plan.chunks > 0 || plan.smem_bytes > 0);
}

template <class Args>
cudaError_t launch_rows(void (*kernel)(Args), const Args& args, int64_t rows, const RowPlan& plan, bool pdl,
                        cudaStream_t stream) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(rows * plan.cluster));
  config.blockDim = dim3(static_cast<unsigned>(plan.threads));
  config.dynamicSmemBytes = static_cast<std::size_t>(plan.smem_bytes);
  config.stream = stream;
  // The cluster attribute even for clusters of 1 (the row kernels' timings were measured so).
  cudaLaunchAttribute attributes[2];
  attributes[0] = cluster_attribute(plan.cluster);
  attributes[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[1].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attributes;
  config.numAttrs = pdl ? 2 : 1;
  return cudaLaunchKernelEx(&config, kernel, args);
}

bool top_k_uses_list(int64_t k) { return k > 0 && k <= kMaxThreads; }

// Shapes and values (what a plan needs), then the pointers (what a launch needs).
bool sampler_shape(const SamplerParams& p) {
  if (p.rows <= 0 || p.vocab <= 0) return false;
  if (!is_float_type(p.dtype) || (!p.from_logits && p.dtype != DType::float32)) return false;
  return p.top_k >= 0 && p.top_p > 0.0f && p.top_p <= 1.0f && p.min_p >= 0.0f && p.min_p <= 1.0f;
}
bool sampler_pointers(const SamplerParams& p) { return p.input != nullptr && p.output != nullptr && p.rng != nullptr; }

bool filter_shape(const FilterParams& p) {
  if (p.rows <= 0 || p.cols <= 0 || !is_float_type(p.dtype)) return false;
  switch (p.op) {
    case FilterOp::softmax: return p.temperature > 0.0f;
    case FilterOp::top_k_mask:
    case FilterOp::top_k_renorm: return p.top_k >= 1 && p.top_k <= p.cols;
    case FilterOp::top_p_renorm: return p.dtype == DType::float32 && p.top_p > 0.0f && p.top_p <= 1.0f;
  }
  return false;
}
bool filter_pointers(const FilterParams& p) { return p.input != nullptr && p.output != nullptr; }

bool top_k_shape(const TopKParams& p) {
  if (p.rows <= 0 || p.cols <= 0 || p.k < 1 || !is_float_type(p.dtype)) return false;
  return p.output != TopKOutput::page_table || p.page_table_stride >= p.cols;
}
bool top_k_pointers(const TopKParams& p) {
  if (p.input == nullptr) return false;
  switch (p.output) {
    case TopKOutput::values_indices: return p.values != nullptr && p.indices != nullptr;
    case TopKOutput::page_table: return p.mapped != nullptr && p.page_table != nullptr;
    case TopKOutput::ragged: return p.mapped != nullptr && p.offsets != nullptr;
  }
  return false;
}

bool chain_shape(const ChainParams& p) { return p.rows > 0 && p.n >= 1 && p.vocab > 0; }
bool chain_pointers(const ChainParams& p) {
  return p.draft_probs != nullptr && p.draft_ids != nullptr && p.target_probs != nullptr && p.rng != nullptr &&
         p.output_ids != nullptr && p.accepted != nullptr && p.emitted != nullptr;
}

bool filter_uses_list(const FilterParams& p) {
  return (p.op == FilterOp::top_k_mask || p.op == FilterOp::top_k_renorm) && top_k_uses_list(p.top_k);
}
bool sampler_uses_list(const SamplerParams& p) { return p.top_k > 0 && p.top_k < p.vocab && top_k_uses_list(p.top_k); }

// Rows per call whose candidates the merge may gather in global memory (more than its shared
// memory holds).
constexpr int64_t kOrderedRows = 16;

// The two-pass workspace, in bytes from its start: the rows' pools, the ordered rows, the chunks'
// run offsets and counts, the thresholds, the cursors and the ordered rows' claim counter.
struct PoolLayout {
  int64_t ordered_rows;
  int64_t ordered;
  int64_t chunk_offsets;
  int64_t chunk_counts;
  int64_t thresholds;
  int64_t cursors;
  int64_t ordered_claimed;
  int64_t bytes;

  PoolLayout(int64_t rows, int64_t chunks, int64_t pool_capacity) : ordered_rows(std::min(rows, kOrderedRows)) {
    const int64_t pool_bytes = pool_capacity * static_cast<int64_t>(sizeof(ListEntry));
    ordered = rows * pool_bytes;
    chunk_offsets = ordered + ordered_rows * pool_bytes;
    chunk_counts = chunk_offsets + rows * chunks * 4;
    thresholds = chunk_counts + rows * chunks * 4;
    cursors = thresholds + rows * 4;
    ordered_claimed = cursors + rows * 4;
    bytes = ordered_claimed + 4;
  }
};

// The two-pass plan (top_k, and the top-k samplers; row_kernels.cuh describes it) where the batch
// fills the GPU with chunks; false where it does not apply (the one-pass plan then).
// The sample rank (two_pass_sample.hpp): on a row in random order, fewer than k elements lie at or
// above the estimate with probability < 1e-9 (the merge then reads the whole row). About
// rank * cols / kSampleSize elements are candidates; a row's pool holds 32 times that, the merge's
// shared memory 4 times (longer lists are gathered in global memory, for up to kOrderedRows rows a
// call): the Zipf rows (whose ranks are an affine map of the columns) that meet the sample's
// spacing give estimates up to 19 times too low (host simulation of kbench's inputs, seed 42,
// copies 0-2).
bool plan_chunks(const void* merge_kernel, DType dtype, int64_t rows, int64_t cols, int64_t k, const Device& device,
                 RowPlan* plan) {
  const int elem = elem_bytes(dtype);
  const int64_t chunks = ceil_div(cols, filter_slice(elem));
  const int64_t slice = ceil_div(ceil_div(cols, chunks), 16 / elem) * (16 / elem);  // balanced, <= filter_slice
  if (k < 1 || k > kMaxThreads || k >= cols || chunks < 2 || chunks > kMaxChunks) return false;
  if (rows * chunks < 2 * static_cast<int64_t>(device.sms) || rows * chunks > 0x7FFFFFFF) return false;
  const int64_t rank = sample_rank(k, cols);
  if (rank > kMaxThreads / 2) return false;
  const auto expected = static_cast<int64_t>(std::ceil(static_cast<double>(rank) * static_cast<double>(cols) / kSampleSize));
  const int64_t dynamic_limit = device.smem_optin - static_cast<int64_t>(sizeof(Shared)) - 4 * (kMaxChunks + 1);
  const int64_t pool_capacity = std::min(32 * expected, cols);
  const int64_t list_capacity = std::min(4 * expected, dynamic_limit / static_cast<int64_t>(sizeof(ListEntry)));
  if (pool_capacity > 0x7FFFFFFF) return false;
  const int64_t merge_bytes = list_capacity * static_cast<int64_t>(sizeof(ListEntry));
  if (cudaFuncSetAttribute(merge_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(merge_bytes)) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  RowPlan out;
  out.cluster = 1;
  out.threads = kMaxThreads;
  out.slice = slice;
  out.list_capacity = static_cast<int>(list_capacity);
  out.smem_bytes = 0;
  out.chunks = static_cast<int>(chunks);
  out.sample_rank = static_cast<int>(rank);
  out.pool_capacity = static_cast<int>(pool_capacity);
  out.merge_smem_bytes = static_cast<int>(merge_bytes);
  out.workspace_bytes = static_cast<std::size_t>(PoolLayout(rows, chunks, pool_capacity).bytes);
  *plan = out;
  return true;
}

// The estimate and the filter of the two-pass plans: the chunks' candidates into the workspace.
// `args` holds the input, its shape and k, and gets the fields the merge reads.
cudaError_t launch_chunks(TopKArgs* args, const RowPlan& plan, int64_t rows, void* workspace, const RowKernels& kernels,
                          cudaStream_t stream) {
  const PoolLayout layout(rows, plan.chunks, plan.pool_capacity);
  auto* base = static_cast<unsigned char*>(workspace);
  CandidatePool& pool = args->pool;
  pool.capacity = plan.pool_capacity;
  pool.chunks = plan.chunks;
  pool.ordered_rows = static_cast<int>(layout.ordered_rows);
  pool.entries = static_cast<ListEntry*>(workspace);
  pool.ordered = reinterpret_cast<ListEntry*>(base + layout.ordered);
  pool.chunk_offsets = reinterpret_cast<int32_t*>(base + layout.chunk_offsets);
  pool.chunk_counts = reinterpret_cast<int32_t*>(base + layout.chunk_counts);
  pool.ordered_claimed = reinterpret_cast<uint32_t*>(base + layout.ordered_claimed);
  args->sample_rank = plan.sample_rank;
  args->list_capacity = plan.list_capacity;
  args->thresholds = reinterpret_cast<uint32_t*>(base + layout.thresholds);
  args->cursors = reinterpret_cast<uint32_t*>(base + layout.cursors);
  cudaError_t status = launch_rows(kernels.top_k_estimate, *args, rows, plan, false, stream);
  if (status == cudaSuccess) status = launch_rows(kernels.top_k_filter, *args, rows * plan.chunks, plan, true, stream);
  return status;
}

}  // namespace

cudaError_t plan_sampler(const SamplerParams& p, RowPlan* plan) {
  if (!sampler_shape(p) || plan == nullptr) return cudaErrorInvalidValue;
  // Two passes for top-k filtering measured against the kept set (joint top-p needs the whole row's
  // mass: one pass).
  if (p.top_k > 0 && !(p.joint && p.top_p < 1.0f)) {
    Device device;
    const cudaError_t status = current_device(&device);
    if (status != cudaSuccess) return status;
    if (plan_chunks(reinterpret_cast<const void*>(kernels_for(p.dtype)->sampler_merge), p.dtype, p.rows, p.vocab,
                    p.top_k, device, plan)) {
      return cudaSuccess;
    }
  }
  return make_plan(reinterpret_cast<const void*>(kernels_for(p.dtype)->sampler), elem_bytes(p.dtype), 1,
                   sampler_uses_list(p), p.rows, p.vocab, plan);
}

cudaError_t plan_filter(const FilterParams& p, RowPlan* plan) {
  if (!filter_shape(p) || plan == nullptr) return cudaErrorInvalidValue;
  return make_plan(reinterpret_cast<const void*>(kernels_for(p.dtype)->filter), elem_bytes(p.dtype), 1,
                   filter_uses_list(p), p.rows, p.cols, plan);
}

cudaError_t plan_top_k(const TopKParams& p, RowPlan* plan) {
  if (!top_k_shape(p) || plan == nullptr) return cudaErrorInvalidValue;
  Device device;
  const cudaError_t status = current_device(&device);
  if (status != cudaSuccess) return status;
  if (p.lengths == nullptr &&
      plan_chunks(reinterpret_cast<const void*>(kernels_for(p.dtype)->top_k_merge), p.dtype, p.rows, p.cols, p.k, device, plan)) {
    return cudaSuccess;
  }
  return make_plan(reinterpret_cast<const void*>(kernels_for(p.dtype)->top_k), elem_bytes(p.dtype), 1,
                   top_k_uses_list(p.k), p.rows, p.cols, plan);
}

cudaError_t plan_chain(const ChainParams& p, RowPlan* plan) {
  if (!chain_shape(p) || plan == nullptr) return cudaErrorInvalidValue;
  return make_plan(reinterpret_cast<const void*>(chain_kernel()), 4, 2, false, p.rows, p.vocab, plan);
}

cudaError_t launch_sampler(const SamplerParams& p, const RowPlan& plan, cudaStream_t stream) {
  if (!sampler_shape(p) || !sampler_pointers(p) || !plan_matches(plan, p.vocab)) return cudaErrorInvalidValue;
  if (sampler_uses_list(p) && plan.chunks == 0 && plan.list_capacity == 0) return cudaErrorInvalidValue;
  SamplerArgs a{};
  a.input = p.input;
  a.cols = p.vocab;
  a.slice = plan.slice;
  a.list_capacity = plan.list_capacity;
  a.from_logits = p.from_logits;
  a.top_k = p.top_k;
  a.top_p = p.top_p;
  a.min_p = p.min_p;
  a.joint = p.joint;
  a.rng = p.rng;
  a.output = p.output;
  const RowKernels& kernels = *kernels_for(p.dtype);
  if (plan.chunks == 0) return launch_rows(kernels.sampler, a, p.rows, plan, false, stream);
  if (p.workspace == nullptr) return cudaErrorInvalidValue;
  TopKArgs chunk{};
  chunk.input = p.input;
  chunk.cols = p.vocab;
  chunk.slice = plan.slice;
  chunk.k = p.top_k;
  const cudaError_t status = launch_chunks(&chunk, plan, p.rows, p.workspace, kernels, stream);
  if (status != cudaSuccess) return status;
  a.list_capacity = chunk.list_capacity;
  a.pool = chunk.pool;
  RowPlan merge = plan;
  merge.smem_bytes = plan.merge_smem_bytes;
  return launch_rows(kernels.sampler_merge, a, p.rows, merge, false, stream);
}

cudaError_t launch_filter(const FilterParams& p, const RowPlan& plan, cudaStream_t stream) {
  if (!filter_shape(p) || !filter_pointers(p) || !plan_matches(plan, p.cols)) return cudaErrorInvalidValue;
  if (filter_uses_list(p) && plan.list_capacity == 0) return cudaErrorInvalidValue;
  FilterArgs a{};
  a.op = p.op;
  a.input = p.input;
  a.cols = p.cols;
  a.slice = plan.slice;
  a.list_capacity = plan.list_capacity;
  a.inv_temperature = 1.0f / p.temperature;
  a.top_k = p.top_k;
  a.top_p = p.top_p;
  a.output = p.output;
  const bool pdl = p.op == FilterOp::softmax && p.enable_pdl;
  return launch_rows(kernels_for(p.dtype)->filter, a, p.rows, plan, pdl, stream);
}

cudaError_t launch_top_k(const TopKParams& p, const RowPlan& plan, cudaStream_t stream) {
  if (!top_k_shape(p) || !top_k_pointers(p) || !plan_matches(plan, p.cols)) return cudaErrorInvalidValue;
  if (top_k_uses_list(p.k) && plan.chunks == 0 && plan.list_capacity == 0) return cudaErrorInvalidValue;
  TopKArgs a{};
  a.output = p.output;
  a.input = p.input;
  a.cols = p.cols;
  a.slice = plan.slice;
  a.list_capacity = plan.list_capacity;
  a.k = p.k;
  a.lengths = p.lengths;
  a.values = p.values;
  a.indices = p.indices;
  a.page_table = p.page_table;
  a.page_table_stride = p.page_table_stride;
  a.offsets = p.offsets;
  a.mapped = p.mapped;
  if (plan.chunks == 0) return launch_rows(kernels_for(p.dtype)->top_k, a, p.rows, plan, false, stream);
  if (p.workspace == nullptr || p.lengths != nullptr) return cudaErrorInvalidValue;
  const cudaError_t status = launch_chunks(&a, plan, p.rows, p.workspace, *kernels_for(p.dtype), stream);
  if (status != cudaSuccess) return status;
  RowPlan merge = plan;
  merge.smem_bytes = plan.merge_smem_bytes;
  return launch_rows(kernels_for(p.dtype)->top_k_merge, a, p.rows, merge, false, stream);
}

cudaError_t launch_chain(const ChainParams& p, const RowPlan& plan, cudaStream_t stream) {
  if (!chain_shape(p) || !chain_pointers(p) || !plan_matches(plan, p.vocab)) return cudaErrorInvalidValue;
  ChainArgs a{};
  a.draft_probs = p.draft_probs;
  a.draft_ids = p.draft_ids;
  a.target_probs = p.target_probs;
  a.n = p.n;
  a.cols = p.vocab;
  a.slice = plan.slice;
  a.rng = p.rng;
  a.output_ids = p.output_ids;
  a.accepted = p.accepted;
  a.emitted = p.emitted;
  return launch_rows(chain_kernel(), a, p.rows, plan, false, stream);
}

cudaError_t sampling_kernels_available() {
  cudaFuncAttributes attributes{};
  return kernel_image_status(cudaFuncGetAttributes(&attributes, row_kernels_f32().sampler));
}

}  // namespace kbench::kernels::sampling
