// The obviously-right decode attention: one 256-thread block per (request, query head), the page
// table walked token by token from the device copies (indptr, indices, last_page_len), scalar
// loads, no split. Pass 1: every logit s_t = (sm_scale * q_scale * k_scale) * dot(q, K_t) (fp32
// dot product, one thread per token), block max. Pass 2, in chunks of 1024 tokens: p_t =
// exp(s_t - max) in double into shared memory, then one thread per dimension accumulates
// sum_t p_t V_t[d] and sum_t p_t in double. o = v_scale * sum / sum(p), written as fp32 (not divided
// by out_scale). A request of length 0 writes zeros.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/attention/decode/decode_common.cuh"
#include "kernels/attention/decode/decode_internal.hpp"

namespace kbench::kernels {

namespace {

using decode_detail::fa2::block_max;
using decode_detail::fa2::load1_global;

struct RefArgs {
  const void* q;
  const void* kv;
  const int32_t* indptr;
  const int32_t* indices;
  const int32_t* last_page_len;
  float* out;
  int64_t page_elems;  // elements per page (K and V)
  int64_t v_offset;    // elements from a K row to its V row
  int64_t slot_elems;  // between slots of one head
  int64_t head_elems;  // between kv heads
  int page_size;
  int num_qo_heads;
  int group;
  int head_dim;
  int q_dtype;
  int kv_dtype;
  float logit_scale;  // sm_scale * q_scale * k_scale
  float v_scale;
};

constexpr int kThreads = 256;
constexpr int kChunk = 1024;

__device__ int64_t row_offset(const RefArgs& a, const int32_t* pages, int t, int kvh) {
  const int page = pages[t / a.page_size];
  const int slot = t % a.page_size;
  return static_cast<int64_t>(page) * a.page_elems + static_cast<int64_t>(slot) * a.slot_elems +
         static_cast<int64_t>(kvh) * a.head_elems;
}

__global__ void __launch_bounds__(kThreads) decode_reference_kernel(const RefArgs a) {
  __shared__ float q[256];
  __shared__ float red[kThreads];
  __shared__ double p[kChunk];
  const int tid = static_cast<int>(threadIdx.x);
  const int h = static_cast<int>(blockIdx.x);
  const int b = static_cast<int>(blockIdx.y);
  const int kvh = h / a.group;
  const int d_count = a.head_dim;

  const int first_page = a.indptr[b];
  const int num_pages = a.indptr[b + 1] - first_page;
  const int len = num_pages > 0 ? (num_pages - 1) * a.page_size + a.last_page_len[b] : 0;
  const int32_t* pages = a.indices + first_page;
  float* out = a.out + (static_cast<int64_t>(b) * a.num_qo_heads + h) * d_count;

  for (int d = tid; d < d_count; d += kThreads) {
    q[d] = load1_global(a.q, (static_cast<int64_t>(b) * a.num_qo_heads + h) * d_count + d, a.q_dtype);
  }
  __syncthreads();

  auto logit = [&](int t) {
    const int64_t base = row_offset(a, pages, t, kvh);
    float dot = 0.0f;
    for (int d = 0; d < d_count; ++d) dot = fmaf(q[d], load1_global(a.kv, base + d, a.kv_dtype), dot);
    return a.logit_scale * dot;
  };

  // Pass 1: the max logit.
  float mx = -INFINITY;
  for (int t = tid; t < len; t += kThreads) mx = fmaxf(mx, logit(t));
  const double m = block_max<kThreads>(mx, red);

  // Pass 2: p in double, chunk by chunk; one thread per dimension sums p and p * V.
  double acc = 0.0;
  double sum = 0.0;
  for (int c0 = 0; c0 < len; c0 += kChunk) {
    const int n = len - c0 < kChunk ? len - c0 : kChunk;
    __syncthreads();  // the previous chunk's p is consumed
    for (int i = tid; i < n; i += kThreads) p[i] = exp(static_cast<double>(logit(c0 + i)) - m);
    __syncthreads();
    if (tid < d_count) {
      for (int i = 0; i < n; ++i) {
        const int64_t base = row_offset(a, pages, c0 + i, kvh) + a.v_offset;
        acc += p[i] * static_cast<double>(load1_global(a.kv, base + tid, a.kv_dtype));
        sum += p[i];
      }
    }
  }
  if (tid < d_count) out[tid] = len > 0 ? static_cast<float>(static_cast<double>(a.v_scale) * acc / sum) : 0.0f;
}

}  // namespace

cudaError_t launch_decode_reference(const DecodeParams& params, float* out_fp32, cudaStream_t stream) {
  if (!decode_detail::fa2::common_inputs_valid(params)) return cudaErrorInvalidValue;
  if (params.batch == 0) return cudaSuccess;
  if (out_fp32 == nullptr || params.kv.last_page_len == nullptr) return cudaErrorInvalidValue;
  if (params.kv.v_data != nullptr) return cudaErrorInvalidValue;  // paged caches only
  if (params.batch > 65535) return cudaErrorInvalidValue;  // gridDim.y

  const PagedKvCache& kv = params.kv;
  const int64_t d = kv.head_dim;
  const int64_t h = kv.num_kv_heads;
  const int64_t ps = kv.page_size;
  RefArgs a{};
  a.q = params.q;
  a.kv = kv.data;
  a.indptr = kv.indptr;
  a.indices = kv.indices;
  a.last_page_len = kv.last_page_len;
  a.out = out_fp32;
  a.page_elems = 2 * ps * h * d;
  a.v_offset = ps * h * d;
  if (kv.layout == KvLayout::NHD) {  // [page][k|v][slot][head][dim]
    a.slot_elems = h * d;
    a.head_elems = d;
  } else {  // HND: [page][k|v][head][slot][dim]
    a.slot_elems = d;
    a.head_elems = ps * d;
  }
  a.page_size = kv.page_size;
  a.num_qo_heads = params.num_qo_heads;
  a.group = params.num_qo_heads / kv.num_kv_heads;
  a.head_dim = kv.head_dim;
  a.q_dtype = decode_detail::fa2::elem_of(params.q_dtype);
  a.kv_dtype = decode_detail::fa2::elem_of(kv.dtype);
  a.logit_scale = params.sm_scale * params.q_scale * kv.k_scale;
  a.v_scale = kv.v_scale;
  decode_reference_kernel<<<dim3(static_cast<unsigned>(params.num_qo_heads), static_cast<unsigned>(params.batch)),
                            kThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace kbench::kernels
