// Private to kernels/attention/decode: what the CUDA-core decode kernel (decode_fa2*.cu), the merge
// kernel (decode_launch.cu) and the reference (decode_reference.cu) share: the argument blocks, the
// per-kv-dtype launchers, the common parameter validation, and device helpers (PDL, cp.async,
// element conversions, output stores). Everything lives in decode_detail::fa2, away from the names
// the tensor-core kernel (decode_fa2_tc*.cu) may use in decode_detail.
#pragma once

#include "kernels/common/pdl.cuh"

#include <cuda_runtime.h>

#include <cstdint>

#include "kbench/dtype.hpp"
#include "kernels/attention/decode/decode.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

namespace kbench::kernels::decode_detail::fa2 {

// Element types as kernels see them (a runtime int for q / out, a template argument for the cache).
enum Elem : int { kBf16 = 0, kFp16 = 1, kE4m3 = 2, kE5m2 = 3 };

[[nodiscard]] constexpr int elem_of(DType t) {
  switch (t) {
    case DType::bfloat16: return kBf16;
    case DType::float16: return kFp16;
    case DType::fp8_e4m3: return kE4m3;
    case DType::fp8_e5m2: return kE5m2;
    default: return -1;  // float32 and index types are not kernel data types here
  }
}
[[nodiscard]] constexpr int elem_bytes(int e) { return e == kE4m3 || e == kE5m2 ? 1 : 2; }

// The parameter checks both kernels share (decode_launch.cu). Shape: dtypes, head_dim
// {64, 128, 256}, num_qo_heads % num_kv_heads == 0, page_size >= 1, finite scales, sizes that fit
// the kernels' 32-bit index math; no pointer is looked at (decode_supported). Inputs: the shape
// plus non-null, aligned q, cache and page tables (the reference). Params: inputs plus out.
[[nodiscard]] bool common_shape_valid(const DecodeParams& p);
[[nodiscard]] bool common_inputs_valid(const DecodeParams& p);
[[nodiscard]] bool common_params_valid(const DecodeParams& p);

// Query heads one CTA of the CUDA-core kernel computes (a power of two <= 8; the kv head's `group`
// query heads are covered by ceil(group / heads) CTAs). Shared with plan_decode's cost model.
[[nodiscard]] constexpr int fa2_heads_per_cta(int group) {
  return group <= 1 ? 1 : group <= 2 ? 2 : group <= 4 ? 4 : 8;
}

// Kernel arguments of the CUDA-core decode kernel (by value). Byte strides of the paged cache:
// K row of (page, slot, kv head) = kv + page * page_bytes + slot * slot_bytes + head * head_bytes;
// its V row is v_offset bytes further.
struct Fa2Args {
  const void* q;
  void* out;
  const char* kv;
  const int32_t* indptr;
  const int32_t* indices;
  const DecodeWorkItem* items;
  const int32_t* merge_indptr;  // null when nothing is split
  float* workspace;             // partial o, then partial lse (DecodePlan's layout)
  int64_t page_bytes;
  int64_t v_offset;
  int64_t slot_bytes;
  int64_t head_bytes;
  int page_size;
  int num_kv_heads;
  int num_qo_heads;
  int group;
  int tiles;  // CTAs per work item: ceil(group / heads per CTA)
  int batch;
  float qk_scale_log2;  // sm_scale * q_scale * k_scale * log2(e): logits in base-2 units
  float v_scale;
  float out_scale;
  int q_dtype;    // Elem
  int out_dtype;  // Elem
};

// One per translation unit decode_fa2_<kv dtype>.cu: picks the (head_dim, heads per CTA)
// instantiation and launches num_items * args.tiles CTAs.
#define KBENCH_DECODE_FA2_DECLARE(NAME)                                                              \
  [[nodiscard]] cudaError_t launch_fa2_##NAME(const Fa2Args& args, int num_items, int head_dim, bool pdl, \
                                              cudaStream_t stream)
KBENCH_DECODE_FA2_DECLARE(bf16);
KBENCH_DECODE_FA2_DECLARE(fp16);
KBENCH_DECODE_FA2_DECLARE(e4m3);
KBENCH_DECODE_FA2_DECLARE(e5m2);
#undef KBENCH_DECODE_FA2_DECLARE

// cudaFuncGetAttributes on the bf16 cache, head_dim 128, 8 heads per CTA kernel (decode_fa2_bf16.cu).
[[nodiscard]] cudaError_t probe_fa2_bf16(cudaFuncAttributes* attributes);

#if defined(__CUDACC__)

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;


// ------------------------------------------------------------------------------------------------
// cp.async (sm_80+): 16 bytes global -> shared, L1 bypassed; zero-filled when !valid (the source is
// then not read).
// ------------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  const int src_size = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_size) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ int ldg_i32(const int32_t* p) { return __ldg(p); }

// 2^x on the SFU (ex2.approx: ~2 ulp; 2^-inf = 0).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// ------------------------------------------------------------------------------------------------
// Element conversions
// ------------------------------------------------------------------------------------------------
__device__ __forceinline__ float2 bf16x2_to_float2(uint32_t bits) {
  return make_float2(__uint_as_float(bits << 16), __uint_as_float(bits & 0xFFFF0000u));
}
__device__ __forceinline__ float2 fp16x2_to_float2(uint32_t bits) {
  __half2 h;
  memcpy(&h, &bits, sizeof(bits));
  return __half22float2(h);
}
// Two fp8 values (low 16 bits of `bits`) -> two floats.
__device__ __forceinline__ float2 e4m3x2_to_float2(uint32_t bits) {
  const __half2_raw raw = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(bits & 0xFFFFu), __NV_E4M3);
  __half2 h;
  memcpy(&h, &raw, sizeof(h));
  return __half22float2(h);
}
// e5m2 is the upper byte of an fp16: byte permutes give two fp16 from two bytes.
__device__ __forceinline__ float2 e5m2x2_lo_to_float2(uint32_t bits) {
  return fp16x2_to_float2(__byte_perm(bits, 0u, 0x1404));
}
__device__ __forceinline__ float2 e5m2x2_hi_to_float2(uint32_t bits) {
  return fp16x2_to_float2(__byte_perm(bits, 0u, 0x3424));
}

// 8 consecutive elements of type E: 16 bytes (16-bit types) or 8 bytes (fp8) as raw words.
template <int E>
__device__ __forceinline__ void unpack8(const uint32_t (&w)[4], float (&f)[8]) {
  if constexpr (E == kBf16 || E == kFp16) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 t = E == kBf16 ? bf16x2_to_float2(w[i]) : fp16x2_to_float2(w[i]);
      f[2 * i] = t.x;
      f[2 * i + 1] = t.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float2 lo, hi;
      if constexpr (E == kE4m3) {
        lo = e4m3x2_to_float2(w[i]);
        hi = e4m3x2_to_float2(w[i] >> 16);
      } else {
        lo = e5m2x2_lo_to_float2(w[i]);
        hi = e5m2x2_hi_to_float2(w[i]);
      }
      f[4 * i] = lo.x;
      f[4 * i + 1] = lo.y;
      f[4 * i + 2] = hi.x;
      f[4 * i + 3] = hi.y;
    }
  }
}

// 8 elements of a runtime dtype from global memory (read-only for the kernel's lifetime), as float.
// `p` is aligned to 8 elements.
__device__ __forceinline__ void load8_global(const void* p, int dtype, float (&f)[8]) {
  uint32_t w[4] = {0u, 0u, 0u, 0u};
  if (elem_bytes(dtype) == 2) {
    const uint4 v = __ldg(static_cast<const uint4*>(p));
    w[0] = v.x;
    w[1] = v.y;
    w[2] = v.z;
    w[3] = v.w;
  } else {
    const uint2 v = __ldg(static_cast<const uint2*>(p));
    w[0] = v.x;
    w[1] = v.y;
  }
  switch (dtype) {
    case kBf16: unpack8<kBf16>(w, f); break;
    case kFp16: unpack8<kFp16>(w, f); break;
    case kE4m3: unpack8<kE4m3>(w, f); break;
    default: unpack8<kE5m2>(w, f); break;
  }
}

// One element of a runtime dtype, as float (the reference's loads).
// The maximum of every thread's v over a block of kThreads threads, for every thread (`red` holds
// kThreads floats): the fp32 reference kernels' first pass.
template <int kThreads>
__device__ __forceinline__ float block_max(float v, float* red) {
  const int tid = static_cast<int>(threadIdx.x);
  red[tid] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
    __syncthreads();
  }
  return red[0];
}

__device__ __forceinline__ float load1_global(const void* base, int64_t index, int dtype) {
  switch (dtype) {
    case kBf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[index]);
    case kFp16: return __half2float(static_cast<const __half*>(base)[index]);
    case kE4m3: return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(base)[index]);
    default: return static_cast<float>(static_cast<const __nv_fp8_e5m2*>(base)[index]);
  }
}

// Pairs of floats -> packed output elements. fp8: (a, b) / out_scale, round to nearest even,
// saturated to the largest finite value.
__device__ __forceinline__ uint32_t pack2_16(float a, float b, int dtype) {
  uint32_t bits;
  if (dtype == kBf16) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    memcpy(&bits, &h, sizeof(bits));
  } else {
    const __half2 h = __floats2half2_rn(a, b);
    memcpy(&bits, &h, sizeof(bits));
  }
  return bits;
}
__device__ __forceinline__ uint32_t pack2_fp8(float a, float b, int dtype, float out_scale) {
  const float2 v = make_float2(__fdiv_rn(a, out_scale), __fdiv_rn(b, out_scale));
  return static_cast<uint32_t>(__nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, dtype == kE4m3 ? __NV_E4M3 : __NV_E5M2));
}

// Stores 8 (or 4) consecutive output elements; `p` is aligned to 8 (4) elements.
__device__ __forceinline__ void store8_out(void* p, int dtype, const float (&y)[8], float out_scale) {
  if (elem_bytes(dtype) == 2) {
    uint4 v;
    v.x = pack2_16(y[0], y[1], dtype);
    v.y = pack2_16(y[2], y[3], dtype);
    v.z = pack2_16(y[4], y[5], dtype);
    v.w = pack2_16(y[6], y[7], dtype);
    *static_cast<uint4*>(p) = v;
  } else {
    uint2 v;
    v.x = pack2_fp8(y[0], y[1], dtype, out_scale) | (pack2_fp8(y[2], y[3], dtype, out_scale) << 16);
    v.y = pack2_fp8(y[4], y[5], dtype, out_scale) | (pack2_fp8(y[6], y[7], dtype, out_scale) << 16);
    *static_cast<uint2*>(p) = v;
  }
}
__device__ __forceinline__ void store4_out(void* p, int dtype, const float (&y)[4], float out_scale) {
  if (elem_bytes(dtype) == 2) {
    uint2 v;
    v.x = pack2_16(y[0], y[1], dtype);
    v.y = pack2_16(y[2], y[3], dtype);
    *static_cast<uint2*>(p) = v;
  } else {
    *static_cast<uint32_t*>(p) =
        pack2_fp8(y[0], y[1], dtype, out_scale) | (pack2_fp8(y[2], y[3], dtype, out_scale) << 16);
  }
}

#endif  // __CUDACC__

}  // namespace kbench::kernels::decode_detail::fa2
