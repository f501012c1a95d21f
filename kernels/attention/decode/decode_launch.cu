// launch_decode: the common parameter checks, dispatch to the kernel (decode_internal.hpp), and the
// merge of split-KV partial results; decode_supported; decode_kernels_available.
//
// Split-KV partials (DecodePlan's workspace layout; both kernels write them the same way): for
// partial slot s and query head g of the kv head (row = s * group + g),
//   partial_o[row][0..head_dim)  = v_scale * sum_t p_t V_t / sum_t p_t   over the slot's tokens (fp32;
//                                  zeros when it has none)
//   partial_lse[row]             = ln(sum_t exp(s_t))  (s_t the scaled logits; -inf when empty)
// with partial_lse starting after num_partial_slots * group * head_dim floats; the kernels read
// num_partial_slots on the device from merge_indptr[batch * num_kv_heads] (DecodeWorkspace carries
// no count), so nothing here reads device memory.
//
// The merge kernel: one block per (request, query head); blocks of (request, kv head) pairs without
// slots return at once. Threads take float4 columns of the head and stride over the slots (head_dim
// 128, 256 threads: 32 columns x 8 slot groups), eight slots' loads in flight a thread (128 threads
// and four where the plan gives no pair more slots than one pass takes). The block finds the pair's
// largest log-sum-exp M and weights each slot by exp(lse - M) (0 for an empty slot), so no load
// waits on the arithmetic of an earlier slot (an online log-sum-exp over the slots, whose loads
// waited on the previous slot's branch, took 12 us for 100 slots of one pair, 25 us for 256: L2
// round trips one after another; this one 4.4 and 5.6 us). The slot groups are combined in shared
// memory and the output is converted and stored (fp8: / out_scale, saturated). Launched only when
// merge_indptr is given, after the decode kernel on the same stream (with PDL when enable_pdl:
// griddepcontrol.wait first).
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/common/kernel_image.hpp"
#include "kernels/attention/decode/decode_common.cuh"
#include "kernels/common/launch.hpp"
#include "kernels/attention/decode/decode_internal.hpp"

namespace kbench::kernels {

namespace decode_detail::fa2 {

namespace {

bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

struct MergeArgs {
  const int32_t* merge_indptr;
  const float* workspace;
  void* out;
  int batch;
  int num_kv_heads;
  int num_qo_heads;
  int group;
  int out_dtype;  // Elem
  float out_scale;
};

// Two shapes of block: pairs of a few slots (most plans: fp8 decode at batch 64 gives 4096 rows
// three slots each) want small blocks with few registers, so that many rows run at once (256-thread
// blocks of 74 registers there ran the decode 4% slower, the merge ~10 waves of blocks); a pair of
// many slots (one KV head at long context: 100 to 256) wants many loads in flight.
struct FewSlots {
  static constexpr int kThreads = 128;
  static constexpr int kBatch = 4;
};
struct ManySlots {
  static constexpr int kThreads = 256;
  static constexpr int kBatch = 8;
};

// Slots one pass of a block covers: its slot groups (threads / float4 columns) x kBatch.
template <class Shape>
constexpr int merge_span(int head_dim) {
  return Shape::kThreads / (head_dim / 4) * Shape::kBatch;
}

template <int kHeadDim, class Shape>
__global__ void __launch_bounds__(Shape::kThreads) decode_merge_kernel(const MergeArgs a) {
  constexpr int kMergeThreads = Shape::kThreads;
  constexpr int kCols = kHeadDim / 4;              // float4 columns
  constexpr int kGroups = kMergeThreads / kCols;   // slot groups
  constexpr int kWarpsPerBlock = kMergeThreads / 32;
  constexpr int kBatch = Shape::kBatch;
  constexpr int kSpan = merge_span<Shape>(kHeadDim);
  const int tid = static_cast<int>(threadIdx.x);
  const int qrow = static_cast<int>(blockIdx.x);  // request * num_qo_heads + query head
  const int req = qrow / a.num_qo_heads;
  const int hq = qrow - req * a.num_qo_heads;
  const int kvh = hq / a.group;
  const int hl = hq - kvh * a.group;
  const int64_t pair = static_cast<int64_t>(req) * a.num_kv_heads + kvh;

  pdl_wait();
  const int s0 = __ldg(a.merge_indptr + pair);
  const int s1 = __ldg(a.merge_indptr + pair + 1);
  if (s0 >= s1) {  // not split: the decode kernel wrote this output
    pdl_launch_dependents();
    return;
  }
  const int64_t num_slots = __ldg(a.merge_indptr + static_cast<int64_t>(a.batch) * a.num_kv_heads);
  const float* partial_o = a.workspace;
  const float* partial_lse = a.workspace + num_slots * a.group * kHeadDim;

  // Batches of kBatch slots a thread (a block pass covers kSpan slots): every load first, then the
  // arithmetic. The products are not guarded by the weight (a guarded product lets the compiler
  // issue the float4 load after the weight: two dependent L2 round trips a slot); an empty slot's
  // partial output is zeros. The first batch is loaded before the max is known, so a pair of up to
  // kSpan slots costs one round trip.
  const int col = tid % kCols;
  const int sg = tid / kCols;
  float lse[kBatch];
  float4 x[kBatch];
  auto load_batch = [&](int base) {
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int s = base + j * kGroups;
      const int64_t row = static_cast<int64_t>(s) * a.group + hl;
      lse[j] = -INFINITY;
      x[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (s < s1) {  // predicated loads: no read past the pair (most pairs have a few slots)
        lse[j] = __ldcg(partial_lse + row);
        x[j] = __ldcg(reinterpret_cast<const float4*>(partial_o + row * kHeadDim + col * 4));
      }
    }
  };
  load_batch(s0 + sg);

  // The largest log-sum-exp of the pair (base 2): the first pass's from the registers, the rest's
  // read once more.
  __shared__ float sm_max[kWarpsPerBlock];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kBatch; ++j) m = fmaxf(m, lse[j] * kLog2e);
  for (int s = s0 + kSpan + tid; s < s1; s += kMergeThreads) {
    m = fmaxf(m, __ldcg(partial_lse + static_cast<int64_t>(s) * a.group + hl) * kLog2e);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if (tid % 32 == 0) sm_max[tid / 32] = m;
  __syncthreads();
  m = sm_max[0];
#pragma unroll
  for (int w = 1; w < kWarpsPerBlock; ++w) m = fmaxf(m, sm_max[w]);
  const float m_ref = m == -INFINITY ? 0.0f : m;  // every slot empty: all weights 0

  float l = 0.0f;
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int base = s0 + sg;;) {
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const float w = exp2f(lse[j] * kLog2e - m_ref);  // 0 past the end and for an empty slot
      l += w;
      acc.x = fmaf(x[j].x, w, acc.x);
      acc.y = fmaf(x[j].y, w, acc.y);
      acc.z = fmaf(x[j].z, w, acc.z);
      acc.w = fmaf(x[j].w, w, acc.w);
    }
    base += kSpan;
    if (base >= s1) break;
    load_batch(base);
  }

  __shared__ float4 sm_acc[kGroups][kCols];
  __shared__ float sm_l[kGroups];
  sm_acc[sg][col] = acc;
  if (col == 0) sm_l[sg] = l;
  __syncthreads();
  pdl_launch_dependents();
  if (sg != 0) return;
  float lsum = 0.0f;
  float y[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int g = 0; g < kGroups; ++g) {
    const float4 v = sm_acc[g][col];
    lsum += sm_l[g];
    y[0] += v.x;
    y[1] += v.y;
    y[2] += v.z;
    y[3] += v.w;
  }
  const float inv = lsum > 0.0f ? 1.0f / lsum : 0.0f;
#pragma unroll
  for (int d = 0; d < 4; ++d) y[d] *= inv;
  const int64_t out_elem = elem_bytes(a.out_dtype);
  store4_out(static_cast<char*>(a.out) + (static_cast<int64_t>(qrow) * kHeadDim + col * 4) * out_elem, a.out_dtype,
             y, a.out_scale);
}

cudaError_t launch_merge(const DecodeParams& params, const DecodeWorkspace& workspace, cudaStream_t stream) {
  MergeArgs args{};
  args.merge_indptr = workspace.merge_indptr;
  args.workspace = static_cast<const float*>(workspace.workspace);
  args.out = params.out;
  args.batch = params.batch;
  args.num_kv_heads = params.kv.num_kv_heads;
  args.num_qo_heads = params.num_qo_heads;
  args.group = params.num_qo_heads / params.kv.num_kv_heads;
  args.out_dtype = elem_of(params.out_dtype);
  args.out_scale = params.out_scale;

  // The few-slot block when one pass of it covers every pair.
  const int head_dim = params.kv.head_dim;
  const bool few = workspace.max_pair_slots > 0 && workspace.max_pair_slots <= merge_span<FewSlots>(head_dim);
  void (*kernel)(MergeArgs) = nullptr;
  switch (head_dim) {
    case 64: kernel = few ? decode_merge_kernel<64, FewSlots> : decode_merge_kernel<64, ManySlots>; break;
    case 128: kernel = few ? decode_merge_kernel<128, FewSlots> : decode_merge_kernel<128, ManySlots>; break;
    case 256: kernel = few ? decode_merge_kernel<256, FewSlots> : decode_merge_kernel<256, ManySlots>; break;
    default: return cudaErrorInvalidValue;
  }
  return launch_kernel(kernel, dim3(static_cast<unsigned>(params.batch) * static_cast<unsigned>(params.num_qo_heads), 1, 1),
                       dim3(few ? FewSlots::kThreads : ManySlots::kThreads, 1, 1), 0, stream, params.enable_pdl,
                       args);
}

bool known_dtype(DType t) { return elem_of(t) >= 0; }

}  // namespace

bool common_shape_valid(const DecodeParams& p) {
  const PagedKvCache& kv = p.kv;
  if (p.batch < 0 || p.num_qo_heads < 1 || kv.num_kv_heads < 1) return false;
  if (p.num_qo_heads % kv.num_kv_heads != 0) return false;
  if (kv.head_dim != 64 && kv.head_dim != 128 && kv.head_dim != 256) return false;
  if (kv.page_size < 1) return false;
  if (!known_dtype(kv.dtype) || !known_dtype(p.q_dtype) || !known_dtype(p.out_dtype)) return false;
  if (!std::isfinite(p.sm_scale) || !std::isfinite(p.q_scale) || !std::isfinite(kv.k_scale) ||
      !std::isfinite(kv.v_scale)) {
    return false;
  }
  if (is_fp8(p.out_dtype) && (!std::isfinite(p.out_scale) || p.out_scale == 0.0f)) return false;
  // Grid sizes and the kernels' 32-bit counts.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (static_cast<int64_t>(p.batch) * p.num_qo_heads > kMax) return false;
  if (static_cast<int64_t>(kv.page_size) * kv.num_kv_heads > kMax) return false;
  return true;
}

bool common_inputs_valid(const DecodeParams& p) {
  if (!common_shape_valid(p)) return false;
  if (p.batch == 0) return true;  // nothing is read
  const PagedKvCache& kv = p.kv;
  if (p.q == nullptr || kv.data == nullptr || kv.indptr == nullptr || kv.indices == nullptr) return false;
  // Vector accesses: 8 elements of q, 16 bytes of the cache, int32 page tables.
  return aligned(p.q, 8 * dtype_size(p.q_dtype)) && aligned(kv.data, 16) && aligned(kv.indptr, 4) &&
         aligned(kv.indices, 4);
}

bool common_params_valid(const DecodeParams& p) {
  if (!common_inputs_valid(p)) return false;
  return p.batch == 0 || (p.out != nullptr && aligned(p.out, 8 * dtype_size(p.out_dtype)));
}

}  // namespace decode_detail::fa2

bool decode_supported(DecodeKernel kernel, const DecodeParams& params) {
  if (!decode_detail::fa2::common_shape_valid(params)) return false;
  switch (kernel) {
    case DecodeKernel::fa2: return decode_detail::fa2_supported(params);
    case DecodeKernel::fa2_tc: return decode_detail::fa2_tc_supported(params);
  }
  return false;
}

cudaError_t launch_decode(DecodeKernel kernel, const DecodeParams& params, const DecodeWorkspace& workspace,
                          cudaStream_t stream) {
  using decode_detail::fa2::aligned;
  if (!decode_supported(kernel, params) || !decode_detail::fa2::common_params_valid(params)) {
    return cudaErrorInvalidValue;
  }
  if (params.batch == 0) return cudaSuccess;
  // A plan has at least one item per (request, kv head); partials need the workspace and the
  // merge table together.
  if (workspace.num_items <= 0 || workspace.items == nullptr || !aligned(workspace.items, 4)) {
    return cudaErrorInvalidValue;
  }
  if (workspace.merge_indptr != nullptr &&
      (workspace.workspace == nullptr || !aligned(workspace.workspace, 16) || !aligned(workspace.merge_indptr, 4))) {
    return cudaErrorInvalidValue;
  }
  cudaError_t status = cudaSuccess;
  switch (kernel) {
    case DecodeKernel::fa2: status = decode_detail::launch_fa2(params, workspace, stream); break;
    case DecodeKernel::fa2_tc: status = decode_detail::launch_fa2_tc(params, workspace, stream); break;
    default: return cudaErrorInvalidValue;
  }
  if (status != cudaSuccess || workspace.merge_indptr == nullptr) return status;
  return decode_detail::fa2::launch_merge(params, workspace, stream);
}

cudaError_t decode_kernels_available() {
  cudaFuncAttributes attributes{};
  cudaError_t status = decode_detail::fa2::probe_fa2_bf16(&attributes);
  if (status == cudaSuccess) {
    using decode_detail::fa2::ManySlots;
    status = cudaFuncGetAttributes(&attributes, decode_detail::fa2::decode_merge_kernel<128, ManySlots>);
  }
  return kernel_image_status(status);
}

}  // namespace kbench::kernels
