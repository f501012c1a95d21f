// The obviously-right prefill attention (prefill.hpp's contract) in fp32, fast enough for refcheck
// on large cases (16 x 4096 tokens x 64 heads x head 128, causal: a whole kbench --refcheck run of
// that case, reference, host comparison and timing included, takes 6 s on an H100).
//
// Work: 32-row tiles of the concatenated query rows, times the query heads, taken by persistent
// 256-thread blocks in a strided loop (the device reads qo_indptr itself: no host copy, no plan).
// A tile may straddle requests: the block walks the requests its rows belong to, one at a time, the
// rows of the other requests idle meanwhile. Eight threads share a query row, each holding an eighth
// of q and of the output accumulator in registers (float4 groups g = part, part + 8, ...; dims
// padded to a multiple of 4 with zeros, so any head dims up to 256 work). K and V chunks of 32 keys
// are converted to fp32 in shared memory and read by every row (broadcast).
//
// Per row, two passes over its visible keys (j < kv_len; causal: j <= i + kv_len - q_len):
//   1. m = max_j s_j, s_j = (sm_scale * q_scale * k_scale) * dot(q_i, K_j) in fp32;
//   2. p_j = exp(s_j - m) (the same s_j, bit for bit), sum_j p_j accumulated in double and
//      sum_j p_j V_j in fp32 (p_j <= 1: no rescaling);
// o_i = v_scale * acc / sum, written as fp32. A row with no visible key writes zeros.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/attention/prefill/prefill.hpp"

namespace kbench::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kThreadsPerRow = 8;
constexpr int kRows = kThreads / kThreadsPerRow;  // query rows per tile
constexpr int kChunk = 32;                        // keys per shared-memory chunk
constexpr int kMaxHeadDim = 256;

enum Elem : int { kBf16, kFp16, kE4m3, kE5m2 };

int elem_of(DType t) {
  switch (t) {
    case DType::bfloat16: return kBf16;
    case DType::float16: return kFp16;
    case DType::fp8_e4m3: return kE4m3;
    case DType::fp8_e5m2: return kE5m2;
    default: return -1;
  }
}

__device__ float load_float(const void* base, int64_t index, int elem) {
  switch (elem) {
    case kBf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[index]);
    case kFp16: return __half2float(static_cast<const __half*>(base)[index]);
    case kE4m3: return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(base)[index]);
    default: return static_cast<float>(static_cast<const __nv_fp8_e5m2*>(base)[index]);
  }
}

struct RefArgs {
  const void* q;
  const int32_t* qo_indptr;
  float* out;
  bool paged;
  const void* k;                  // ragged K, or the paged cache
  const void* v;                  // ragged V, or the paged cache
  const int32_t* kv_indptr;       // ragged: token offsets; paged: page offsets
  const int32_t* page_indices;    // paged
  const int32_t* last_page_len;   // paged
  int page_size;
  int64_t page_elems;  // paged, in elements: one page (K and V)
  int64_t v_offset;    // from a K row to its V row
  int64_t slot_elems;  // between the slots of one head
  int64_t head_elems;  // between kv heads
  int batch;
  int num_qo_heads;
  int num_kv_heads;
  int group;
  int head_dim_qk;
  int head_dim_vo;
  int q_elem;
  int kv_elem;
  bool causal;
  float logit_scale;  // sm_scale * q_scale * k_scale
  float v_scale;
};

__device__ int64_t kv_len_of(const RefArgs& a, int b) {
  const int64_t begin = a.kv_indptr[b];
  const int64_t end = a.kv_indptr[b + 1];
  if (!a.paged) return end - begin;
  return end > begin ? (end - begin - 1) * a.page_size + a.last_page_len[b] : 0;
}

// Keys row i sees under the bottom-right causal mask: j <= i + shift, j < kv_len.
__device__ int64_t visible_keys(int64_t i, int64_t shift, int64_t kv_len) {
  const int64_t n = i + shift + 1;
  return n < 0 ? 0 : n > kv_len ? kv_len : n;
}

// Element offset of the K row of key j of request b, kv head kvh (the V row: + v_offset when paged).
__device__ int64_t key_row(const RefArgs& a, int b, int64_t j, int kvh, int head_dim) {
  if (!a.paged) return ((a.kv_indptr[b] + j) * a.num_kv_heads + kvh) * head_dim;
  const int64_t page = a.page_indices[a.kv_indptr[b] + j / a.page_size];
  return page * a.page_elems + (j % a.page_size) * a.slot_elems + kvh * a.head_elems;
}

// Keys [c0, c0 + kChunk) of request b as fp32 rows of `width` floats (zeros past keys_end and
// head_dim); one warp per key.
__device__ void stage(const RefArgs& a, const void* base, int64_t extra_offset, int head_dim, int width, int b,
                      int kvh, int64_t c0, int64_t keys_end, float* rows) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll 1
  for (int key = warp; key < kChunk; key += kThreads / 32) {
    const int64_t j = c0 + key;
    const bool valid = j < keys_end;
    const int64_t row = valid ? key_row(a, b, j, kvh, head_dim) + extra_offset : 0;
#pragma unroll 1
    for (int d = lane; d < width; d += 32) {
      rows[key * width + d] = valid && d < head_dim ? load_float(base, row + d, a.kv_elem) : 0.0f;
    }
  }
}

// kGroups: float4 groups per thread, enough for max(head_dim_qk, head_dim_vo) <= 4 * kThreadsPerRow * kGroups.
template <int kGroups>
__global__ void __launch_bounds__(kThreads, 1) prefill_reference_kernel(const RefArgs a) {
  extern __shared__ float4 smem[];
  const int qk_groups = (a.head_dim_qk + 3) / 4;
  const int vo_groups = (a.head_dim_vo + 3) / 4;
  const int k_width = qk_groups * 4;
  const int v_width = vo_groups * 4;
  float* k_rows = reinterpret_cast<float*>(smem);  // [kChunk][k_width]
  float* v_rows = k_rows + kChunk * k_width;       // [kChunk][v_width]
  const float4* k_rows4 = reinterpret_cast<const float4*>(k_rows);
  const float4* v_rows4 = reinterpret_cast<const float4*>(v_rows);

  const int tid = static_cast<int>(threadIdx.x);
  const int row_slot = tid / kThreadsPerRow;
  const int part = tid % kThreadsPerRow;
  const int heads = a.num_qo_heads;
  const int64_t total_rows = a.qo_indptr[a.batch];
  const int64_t work = (total_rows + kRows - 1) / kRows * heads;

  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    const int head = static_cast<int>(w % heads);
    const int kvh = head / a.group;
    const int64_t tile_start = w / heads * kRows;
    const int64_t tile_end = tile_start + kRows < total_rows ? tile_start + kRows : total_rows;
    const int64_t row = tile_start + row_slot;

    float4 q[kGroups];
#pragma unroll
    for (int k = 0; k < kGroups; ++k) {
      const int g = part + kThreadsPerRow * k;
      float v[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int d = 4 * g + e;
        v[e] = row < tile_end && d < a.head_dim_qk
                   ? load_float(a.q, (row * heads + head) * a.head_dim_qk + d, a.q_elem)
                   : 0.0f;
      }
      q[k] = make_float4(v[0], v[1], v[2], v[3]);
    }

    // The request holding tile_start: the last b with qo_indptr[b] <= tile_start.
    int lo = 0;
    int hi = a.batch;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (a.qo_indptr[mid] <= tile_start) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    for (int b = lo; b < a.batch && a.qo_indptr[b] < tile_end; ++b) {
      const int64_t q0 = a.qo_indptr[b];
      const int64_t q1 = a.qo_indptr[b + 1];
      const int64_t seg_lo = tile_start > q0 ? tile_start : q0;
      const int64_t seg_hi = tile_end < q1 ? tile_end : q1;
      if (seg_lo >= seg_hi) continue;
      const int64_t kv_len = kv_len_of(a, b);
      const int64_t shift = kv_len - (q1 - q0);  // causal: row i sees keys j <= i + shift
      // Keys [0, keys_end) are seen by some row of the segment, [0, limit) by this thread's row.
      const int64_t keys_end = a.causal ? visible_keys(seg_hi - 1 - q0, shift, kv_len) : kv_len;
      const bool active = row >= seg_lo && row < seg_hi;
      const int64_t limit = !active ? 0 : a.causal ? visible_keys(row - q0, shift, kv_len) : kv_len;

      // s_j for the key in shared-memory row `key`: each thread's share of the dot product, summed
      // over the row's threads (neighbouring lanes).
      auto logit = [&](int key) {
        float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
        for (int k = 0; k < kGroups; ++k) {
          const int g = part + kThreadsPerRow * k;
          if (g < qk_groups) {
            const float4 kk = k_rows4[key * qk_groups + g];
            s.x = fmaf(q[k].x, kk.x, s.x);
            s.y = fmaf(q[k].y, kk.y, s.y);
            s.z = fmaf(q[k].z, kk.z, s.z);
            s.w = fmaf(q[k].w, kk.w, s.w);
          }
        }
        float dot = (s.x + s.y) + (s.z + s.w);
#pragma unroll
        for (int lanes = 1; lanes < kThreadsPerRow; lanes *= 2) dot += __shfl_xor_sync(0xFFFFFFFFu, dot, lanes);
        return a.logit_scale * dot;
      };

      // Pass 1: the row's max logit.
      float m = -INFINITY;
      for (int64_t c0 = 0; c0 < keys_end; c0 += kChunk) {
        __syncthreads();  // the previous chunk is consumed
        stage(a, a.k, 0, a.head_dim_qk, k_width, b, kvh, c0, keys_end, k_rows);
        __syncthreads();
        const int n = static_cast<int>(keys_end - c0 < kChunk ? keys_end - c0 : kChunk);
#pragma unroll 1
        for (int key = 0; key < n; ++key) {
          const float s = logit(key);
          if (c0 + key < limit) m = fmaxf(m, s);
        }
      }

      // Pass 2: p = exp(s - m); sums of p (double) and p V (fp32).
      double sum = 0.0;
      float4 acc[kGroups];
#pragma unroll
      for (int k = 0; k < kGroups; ++k) acc[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int64_t c0 = 0; c0 < keys_end; c0 += kChunk) {
        __syncthreads();
        stage(a, a.k, 0, a.head_dim_qk, k_width, b, kvh, c0, keys_end, k_rows);
        stage(a, a.v, a.v_offset, a.head_dim_vo, v_width, b, kvh, c0, keys_end, v_rows);
        __syncthreads();
        const int n = static_cast<int>(keys_end - c0 < kChunk ? keys_end - c0 : kChunk);
#pragma unroll 1
        for (int key = 0; key < n; ++key) {
          const float s = logit(key);
          if (c0 + key >= limit) continue;
          const float p = expf(s - m);
          sum += static_cast<double>(p);
#pragma unroll
          for (int k = 0; k < kGroups; ++k) {
            const int g = part + kThreadsPerRow * k;
            if (g < vo_groups) {
              const float4 vv = v_rows4[key * vo_groups + g];
              acc[k].x = fmaf(p, vv.x, acc[k].x);
              acc[k].y = fmaf(p, vv.y, acc[k].y);
              acc[k].z = fmaf(p, vv.z, acc[k].z);
              acc[k].w = fmaf(p, vv.w, acc[k].w);
            }
          }
        }
      }

      if (active) {
        const double scale = limit > 0 ? static_cast<double>(a.v_scale) / sum : 0.0;
        float* out = a.out + (row * heads + head) * a.head_dim_vo;
#pragma unroll
        for (int k = 0; k < kGroups; ++k) {
          const int g = part + kThreadsPerRow * k;
          const float o[4] = {acc[k].x, acc[k].y, acc[k].z, acc[k].w};
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int d = 4 * g + e;
            if (g < vo_groups && d < a.head_dim_vo) out[d] = static_cast<float>(static_cast<double>(o[e]) * scale);
          }
        }
      }
    }
  }
}

bool inputs_valid(const PrefillParams& p, const float* out_fp32) {
  if (p.batch < 0 || p.num_qo_heads < 1 || p.num_kv_heads < 1 || p.num_qo_heads % p.num_kv_heads != 0) return false;
  if (p.head_dim_qk < 1 || p.head_dim_vo < 1 || p.head_dim_qk > kMaxHeadDim || p.head_dim_vo > kMaxHeadDim) {
    return false;
  }
  if (elem_of(p.q_dtype) < 0 || elem_of(p.kv_dtype) < 0) return false;
  if (p.batch == 0) return true;
  if (p.q == nullptr || p.qo_indptr == nullptr || out_fp32 == nullptr) return false;
  if (p.paged) {
    return p.head_dim_qk == p.head_dim_vo && p.pages.page_size >= 1 && p.pages.data != nullptr &&
           p.pages.indptr != nullptr && p.pages.indices != nullptr && p.pages.last_page_len != nullptr;
  }
  return p.ragged.k != nullptr && p.ragged.v != nullptr && p.ragged.indptr != nullptr;
}

}  // namespace

cudaError_t launch_prefill_reference(const PrefillParams& params, float* out_fp32, cudaStream_t stream) {
  if (!inputs_valid(params, out_fp32)) return cudaErrorInvalidValue;
  if (params.batch == 0) return cudaSuccess;

  RefArgs a{};
  a.q = params.q;
  a.qo_indptr = params.qo_indptr;
  a.out = out_fp32;
  a.paged = params.paged;
  a.batch = params.batch;
  a.num_qo_heads = params.num_qo_heads;
  a.num_kv_heads = params.num_kv_heads;
  a.group = params.num_qo_heads / params.num_kv_heads;
  a.head_dim_qk = params.head_dim_qk;
  a.head_dim_vo = params.head_dim_vo;
  a.q_elem = elem_of(params.q_dtype);
  a.kv_elem = elem_of(params.kv_dtype);
  a.causal = params.causal;
  a.logit_scale = params.sm_scale * params.q_scale * params.k_scale;
  a.v_scale = params.v_scale;
  if (params.paged) {
    const PagedKvView& kv = params.pages;
    const int64_t d = params.head_dim_qk;
    const int64_t h = params.num_kv_heads;
    const int64_t ps = kv.page_size;
    a.k = a.v = kv.data;
    a.kv_indptr = kv.indptr;
    a.page_indices = kv.indices;
    a.last_page_len = kv.last_page_len;
    a.page_size = kv.page_size;
    a.page_elems = 2 * ps * h * d;
    a.v_offset = ps * h * d;
    a.slot_elems = kv.layout == KvLayout::NHD ? h * d : d;        // NHD [slot][head][dim]
    a.head_elems = kv.layout == KvLayout::NHD ? d : ps * d;       // HND [head][slot][dim]
  } else {
    a.k = params.ragged.k;
    a.v = params.ragged.v;
    a.kv_indptr = params.ragged.indptr;
  }

  const int max_dim = params.head_dim_qk > params.head_dim_vo ? params.head_dim_qk : params.head_dim_vo;
  void (*kernel)(RefArgs) = max_dim <= 64 ? prefill_reference_kernel<2>
                            : max_dim <= 128 ? prefill_reference_kernel<4>
                                             : prefill_reference_kernel<8>;
  const int smem = kChunk * 4 * ((params.head_dim_qk + 3) / 4 + (params.head_dim_vo + 3) / 4) *
                   static_cast<int>(sizeof(float));
  cudaError_t status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  int device = 0;
  int sm_count = 0;
  int blocks_per_sm = 0;
  if (status == cudaSuccess) status = cudaGetDevice(&device);
  if (status == cudaSuccess) status = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  if (status == cudaSuccess) {
    status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, kThreads, smem);
  }
  if (status != cudaSuccess) return status;
  const int blocks = sm_count * (blocks_per_sm > 0 ? blocks_per_sm : 1);
  kernel<<<blocks, kThreads, smem, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace kbench::kernels
