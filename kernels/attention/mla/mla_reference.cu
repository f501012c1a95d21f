// The obviously-right MLA decode (mla.hpp's contract): one 256-thread block per (query row, head),
// the page table walked token by token from the device copies, scalar loads, no split.
// q_nope and q_pe are read once into shared memory, already multiplied by their dequantisation
// scales. Pass 1: every visible key's logit (fp32 dot products over ckv and kpe, one thread per
// key), block max. Pass 2, in chunks of 1024 keys: p_t = exp(s_t - max) in double into shared
// memory, then one thread per latent dimension accumulates sum_t p_t ckv_t[d] in double (shared
// memory, each dimension owned by one thread) while every thread sums p_t. o = ckv_scale * acc /
// sum(p), written as fp32. A row with no visible key writes zeros.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/attention/mla/mla.hpp"
// The runtime-dtype element load the decode reference uses: one definition for every reference.
#include "kernels/attention/decode/decode_common.cuh"

namespace kbench::kernels {

namespace {

using decode_detail::fa2::block_max;
using decode_detail::fa2::elem_of;
using decode_detail::fa2::load1_global;

constexpr int kThreads = 256;
constexpr int kChunk = 1024;
// Bounds that keep the dynamic shared memory (acc in double, q in float) under the default 48 KiB.
constexpr int kMaxHeadDimCkv = 2048;
constexpr int kMaxHeadDimKpe = 512;

struct RefArgs {
  const void* q_nope;
  const void* q_pe;
  const void* ckv;
  const void* kpe;
  const int32_t* kv_indptr;
  const int32_t* kv_indices;
  const int32_t* kv_len;
  float* out;
  int s_qo;
  int num_heads;
  int d_ckv;
  int d_kpe;
  int page_size;
  int q_dtype;
  int kv_dtype;
  float nope_scale;  // q_scale * ckv_scale, folded into the shared copy of q_nope
  float pe_scale;    // q_scale * kpe_scale
  float sm_scale;
  float v_scale;     // ckv_scale
};

__global__ void __launch_bounds__(kThreads) mla_reference_kernel(const RefArgs a) {
  extern __shared__ double acc[];  // [d_ckv], then q as float [d_ckv + d_kpe]
  float* q = reinterpret_cast<float*>(acc + a.d_ckv);
  __shared__ float red[kThreads];
  __shared__ double p[kChunk];
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t row = blockIdx.x;
  const int h = static_cast<int>(blockIdx.y);
  const int b = static_cast<int>(row / a.s_qo);
  const int i = static_cast<int>(row % a.s_qo);
  const int kv_len = a.kv_len[b];
  int visible = kv_len - a.s_qo + 1 + i;
  visible = visible < 0 ? 0 : (visible > kv_len ? kv_len : visible);
  const int32_t* pages = a.kv_indices + a.kv_indptr[b];
  const int64_t head_row = row * a.num_heads + h;

  for (int d = tid; d < a.d_ckv; d += kThreads) {
    q[d] = a.nope_scale * load1_global(a.q_nope, head_row * a.d_ckv + d, a.q_dtype);
    acc[d] = 0.0;
  }
  for (int d = tid; d < a.d_kpe; d += kThreads) {
    q[a.d_ckv + d] = a.pe_scale * load1_global(a.q_pe, head_row * a.d_kpe + d, a.q_dtype);
  }
  __syncthreads();

  auto token_row = [&](int t) {
    return static_cast<int64_t>(pages[t / a.page_size]) * a.page_size + t % a.page_size;
  };
  auto logit = [&](int t) {
    const int64_t key = token_row(t);
    float dot = 0.0f;
    for (int d = 0; d < a.d_ckv; ++d) dot = fmaf(q[d], load1_global(a.ckv, key * a.d_ckv + d, a.kv_dtype), dot);
    for (int d = 0; d < a.d_kpe; ++d) {
      dot = fmaf(q[a.d_ckv + d], load1_global(a.kpe, key * a.d_kpe + d, a.kv_dtype), dot);
    }
    return a.sm_scale * dot;
  };

  // Pass 1: the max logit.
  float mx = -INFINITY;
  for (int t = tid; t < visible; t += kThreads) mx = fmaxf(mx, logit(t));
  const double m = block_max<kThreads>(mx, red);

  // Pass 2: p in double, chunk by chunk; each thread owns the dimensions tid, tid + 256, ...
  double sum = 0.0;
  for (int c0 = 0; c0 < visible; c0 += kChunk) {
    const int n = visible - c0 < kChunk ? visible - c0 : kChunk;
    __syncthreads();  // the previous chunk's p is consumed
    for (int k = tid; k < n; k += kThreads) p[k] = exp(static_cast<double>(logit(c0 + k)) - m);
    __syncthreads();
    for (int k = 0; k < n; ++k) sum += p[k];
    for (int d = tid; d < a.d_ckv; d += kThreads) {
      double partial = 0.0;
      for (int k = 0; k < n; ++k) {
        partial += p[k] * static_cast<double>(load1_global(a.ckv, token_row(c0 + k) * a.d_ckv + d, a.kv_dtype));
      }
      acc[d] += partial;
    }
  }
  float* out = a.out + head_row * a.d_ckv;
  for (int d = tid; d < a.d_ckv; d += kThreads) {
    out[d] = visible > 0 ? static_cast<float>(static_cast<double>(a.v_scale) * acc[d] / sum) : 0.0f;
  }
}

}  // namespace

cudaError_t launch_mla_reference(const MlaParams& params, float* out_fp32, cudaStream_t stream) {
  const MlaParams& m = params;
  if (m.batch < 0 || m.s_qo < 1 || m.num_heads < 1 || m.page_size < 1) return cudaErrorInvalidValue;
  if (m.head_dim_ckv < 1 || m.head_dim_ckv > kMaxHeadDimCkv || m.head_dim_kpe < 0 ||
      m.head_dim_kpe > kMaxHeadDimKpe) {
    return cudaErrorInvalidValue;
  }
  if (elem_of(m.q_dtype) < 0 || elem_of(m.kv_dtype) < 0) return cudaErrorInvalidValue;
  if (m.batch == 0) return cudaSuccess;
  const int64_t rows = static_cast<int64_t>(m.batch) * m.s_qo;
  if (rows > 0x7FFFFFFF || m.num_heads > 65535) return cudaErrorInvalidValue;  // gridDim.x, gridDim.y
  if (out_fp32 == nullptr || m.q_nope == nullptr || m.ckv == nullptr || m.kv_indptr == nullptr ||
      m.kv_indices == nullptr || m.kv_len == nullptr || (m.head_dim_kpe > 0 && (m.q_pe == nullptr || m.kpe == nullptr))) {
    return cudaErrorInvalidValue;
  }
  RefArgs a{};
  a.q_nope = m.q_nope;
  a.q_pe = m.q_pe;
  a.ckv = m.ckv;
  a.kpe = m.kpe;
  a.kv_indptr = m.kv_indptr;
  a.kv_indices = m.kv_indices;
  a.kv_len = m.kv_len;
  a.out = out_fp32;
  a.s_qo = m.s_qo;
  a.num_heads = m.num_heads;
  a.d_ckv = m.head_dim_ckv;
  a.d_kpe = m.head_dim_kpe;
  a.page_size = m.page_size;
  a.q_dtype = elem_of(m.q_dtype);
  a.kv_dtype = elem_of(m.kv_dtype);
  a.nope_scale = m.q_scale * m.ckv_scale;
  a.pe_scale = m.q_scale * m.kpe_scale;
  a.sm_scale = m.sm_scale;
  a.v_scale = m.ckv_scale;
  const size_t shared = static_cast<size_t>(m.head_dim_ckv) * sizeof(double) +
                        static_cast<size_t>(m.head_dim_ckv + m.head_dim_kpe) * sizeof(float);
  mla_reference_kernel<<<dim3(static_cast<unsigned>(rows), static_cast<unsigned>(m.num_heads)), kThreads, shared,
                         stream>>>(a);
  return cudaGetLastError();
}

}  // namespace kbench::kernels
