// kbench's fast RMSNorm kernels (device code) and the private interface between
// rmsnorm_launch.cu (validation, launch configuration) and the per-dtype translation units
// rmsnorm_<in>_<out>.cu (one instantiation set each). Not part of the public API: include
// "kernels/norm/rmsnorm.hpp" instead.
//
// Three paths, all one CUDA block per `rows_per_block` rows, `threads_per_row` threads per row
// (a power of two <= 32 or a multiple of 32, so a row never straddles a warp boundary unevenly):
//
//  * kRegisters  (16-byte vectors, hidden <= 32768 elements): one pass over HBM. Every thread loads
//    kVpt (1, 4 or 8) 16-byte vectors of its row (all in flight before the first use; streaming,
//    not allocated in L1), prefetches the matching weight lines into L1, keeps the row in
//    registers, reduces the sum of squares (warp shuffles and, for rows wider than a warp, one
//    shared-memory step) while the weight loads are in flight, then writes the output with
//    evict-first stores.
//  * kLoopVector (16-byte vectors, wider rows): two passes; the second re-reads the row (from L2).
//  * kLoopScalar (any hidden, any alignment): the same two passes, one element at a time.
//
// The math, per row: v = input (fused add: v = round_to_in(input + residual), stored to residual);
// y = v * (rsqrt(sum(v^2) / hidden + eps) * out_scale) * (weight_offset + weight); fp32 math
// throughout, out = y rounded to nearest even (fp8: saturated to the largest finite value).
#pragma once

#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/norm/rmsnorm.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <type_traits>
#endif

namespace kbench::kernels::rmsnorm_detail {

enum class Path : int { kRegisters = 0, kLoopVector = 1, kLoopScalar = 2 };

// Largest hidden size (in elements of a 16-bit input) the register path holds: 8 vectors of 8
// elements per thread, at most 512 threads per row.
inline constexpr int64_t kRegisterPathMaxHidden = 8 * 8 * 512;

struct Plan {
  Path path = Path::kLoopScalar;
  int vpt = 1;              // register path: 16-byte vectors per thread (1, 4 or 8)
  int threads_per_row = 32; // blockDim.x
  int rows_per_block = 1;   // blockDim.y
  int64_t blocks = 0;       // gridDim.x
};

// Kernel arguments (by value). Strides in elements.
struct Args {
  const void* input;
  void* residual;
  const void* weight;
  void* output;
  int64_t rows;
  int64_t hidden;
  int64_t input_stride;
  int64_t residual_stride;
  int64_t output_stride;
  float eps;
  float inv_hidden;
  float weight_offset;
  float out_scale;
  uint32_t zero;  // always 0: an optimization barrier (see rmsnorm_reg_kernel)
};

// Shared by launch_rmsnorm and launch_rmsnorm_reference: dtype combination, sizes, pointers,
// strides and aliasing rules (rmsnorm_launch.cu).
[[nodiscard]] bool params_valid(const RmsNormParams& p);

// One per translation unit rmsnorm_<in>_<out>.cu.
#define KBENCH_RMSNORM_DECLARE(NAME)                                                          \
  [[nodiscard]] cudaError_t launch_##NAME(const Args& args, const Plan& plan, bool fused, \
                                          bool pdl, cudaStream_t stream)
KBENCH_RMSNORM_DECLARE(bf16_bf16);
KBENCH_RMSNORM_DECLARE(bf16_e4m3);
KBENCH_RMSNORM_DECLARE(bf16_e5m2);
KBENCH_RMSNORM_DECLARE(fp16_fp16);
KBENCH_RMSNORM_DECLARE(fp16_e4m3);
KBENCH_RMSNORM_DECLARE(fp16_e5m2);
// fused_rmsnorm_silu: out = silu(y), 16-bit outputs, no fused add (rmsnorm_silu_<in>.cu).
KBENCH_RMSNORM_DECLARE(bf16_bf16_silu);
KBENCH_RMSNORM_DECLARE(fp16_fp16_silu);
#undef KBENCH_RMSNORM_DECLARE

// The kernel arguments of `p` (its pointers, sizes, strides and scalars).
[[nodiscard]] Args make_args(const RmsNormParams& p);

// The launch configuration launch_rmsnorm uses for `p` (rmsnorm_launch.cu); the fused FP4 norms
// (rmsnorm_fp4_launch.cu) and LayerNorm (layernorm_launch.cu) plan the same way.
[[nodiscard]] Plan make_plan(const RmsNormParams& p);

// cudaFuncGetAttributes on the main bf16 -> bf16 register-path kernel (rmsnorm_bf16_bf16.cu).
[[nodiscard]] cudaError_t probe_bf16_bf16(cudaFuncAttributes* attributes);

#if defined(__CUDACC__)

// ------------------------------------------------------------------------------------------------
// Memory access helpers
// ------------------------------------------------------------------------------------------------

struct alignas(16) Pack16 {
  uint32_t u[4];
};
struct alignas(8) Pack8 {
  uint32_t u[2];
};

// One-shot streaming load: coherent (the output may alias the input), not allocated in L1 so the
// weight stays there.
__device__ __forceinline__ Pack16 ld_stream16(const void* p) {
  Pack16 v;
  asm volatile("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.u[0]), "=r"(v.u[1]), "=r"(v.u[2]), "=r"(v.u[3])
               : "l"(p));
  return v;
}
// Plain coherent load (loop path: the first pass leaves the row in cache for the second).
__device__ __forceinline__ Pack16 ld_plain16(const void* p) {
  Pack16 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.u[0]), "=r"(v.u[1]), "=r"(v.u[2]), "=r"(v.u[3])
               : "l"(p));
  return v;
}
// Weight: read-only for the kernel's lifetime (validated: it overlaps no written tensor).
__device__ __forceinline__ Pack16 ld_weight16(const void* p) {
  Pack16 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.u[0]), "=r"(v.u[1]), "=r"(v.u[2]), "=r"(v.u[3])
               : "l"(p));
  return v;
}
__device__ __forceinline__ void prefetch_l1(const void* p) {
  asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
}
// Streaming stores (evict-first): the kernel never reads them back (the loop path's residual,
// which it does re-read, uses st_plain16).
__device__ __forceinline__ void st_stream16(void* p, const Pack16& v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.u[0]), "r"(v.u[1]),
               "r"(v.u[2]), "r"(v.u[3])
               : "memory");
}
__device__ __forceinline__ void st_stream8(void* p, const Pack8& v) {
  asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(v.u[0]), "r"(v.u[1]) : "memory");
}
__device__ __forceinline__ void st_stream4(void* p, uint32_t v) {
  asm volatile("st.global.cs.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_plain16(void* p, const Pack16& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.u[0]), "r"(v.u[1]),
               "r"(v.u[2]), "r"(v.u[3])
               : "memory");
}


// ------------------------------------------------------------------------------------------------
// Element conversions
// ------------------------------------------------------------------------------------------------

template <class T>
struct InTraits;

template <>
struct InTraits<__nv_bfloat16> {
  // bf16 is the upper half of an fp32: one shift / mask per element.
  static __device__ __forceinline__ float2 to_float2(uint32_t bits) {
    return make_float2(__uint_as_float(bits << 16), __uint_as_float(bits & 0xFFFF0000u));
  }
  static __device__ __forceinline__ uint32_t from_float2(float2 f) {
    const __nv_bfloat162 h = __float22bfloat162_rn(f);
    uint32_t bits;
    memcpy(&bits, &h, sizeof(bits));
    return bits;
  }
  static __device__ __forceinline__ float to_float(uint16_t bits) {
    return __bfloat162float(__ushort_as_bfloat16(bits));
  }
  static __device__ __forceinline__ uint16_t from_float(float f) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
  }
};

template <>
struct InTraits<__half> {
  static __device__ __forceinline__ float2 to_float2(uint32_t bits) {
    __half2 h;
    static_assert(sizeof(h) == sizeof(bits));
    memcpy(&h, &bits, sizeof(bits));
    return __half22float2(h);
  }
  static __device__ __forceinline__ uint32_t from_float2(float2 f) {
    const __half2 h = __float22half2_rn(f);
    uint32_t bits;
    memcpy(&bits, &h, sizeof(bits));
    return bits;
  }
  static __device__ __forceinline__ float to_float(uint16_t bits) {
    return __half2float(__ushort_as_half(bits));
  }
  static __device__ __forceinline__ uint16_t from_float(float f) {
    return __half_as_ushort(__float2half_rn(f));
  }
};

// Output: 16-bit types reuse InTraits; fp8 converts with RNE + saturation to the max finite.
template <class T>
struct OutTraits {
  static constexpr int kBytes8 = 16;  // bytes of 8 elements
  static __device__ __forceinline__ void store8(void* p, const float (&y)[8]) {
    Pack16 v;
#pragma unroll
    for (int j = 0; j < 4; ++j) v.u[j] = InTraits<T>::from_float2(make_float2(y[2 * j], y[2 * j + 1]));
    st_stream16(p, v);
  }
  static __device__ __forceinline__ void store1(void* p, float y) {
    *static_cast<uint16_t*>(p) = InTraits<T>::from_float(y);
  }
};

template <__nv_fp8_interpretation_t kKind>
struct Fp8OutTraits {
  static constexpr int kBytes8 = 8;
  static __device__ __forceinline__ uint32_t pair(float a, float b) {
    return static_cast<uint32_t>(__nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, kKind));
  }
  static __device__ __forceinline__ void store8(void* p, const float (&y)[8]) {
    Pack8 v;
    v.u[0] = pair(y[0], y[1]) | (pair(y[2], y[3]) << 16);
    v.u[1] = pair(y[4], y[5]) | (pair(y[6], y[7]) << 16);
    st_stream8(p, v);
  }
  static __device__ __forceinline__ void store1(void* p, float y) {
    *static_cast<uint8_t*>(p) = static_cast<uint8_t>(__nv_cvt_float_to_fp8(y, __NV_SATFINITE, kKind));
  }
};
template <>
struct OutTraits<__nv_fp8_e4m3> : Fp8OutTraits<__NV_E4M3> {};
template <>
struct OutTraits<__nv_fp8_e5m2> : Fp8OutTraits<__NV_E5M2> {};

// 8 elements of a 16-byte input vector.
template <class TIn>
__device__ __forceinline__ void unpack8(const Pack16& v, float (&f)[8]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float2 t = InTraits<TIn>::to_float2(v.u[j]);
    f[2 * j] = t.x;
    f[2 * j + 1] = t.y;
  }
}

// Fused add: v = round_to_in(float(x) + float(r)), elementwise.
template <class TIn>
__device__ __forceinline__ Pack16 add_round8(const Pack16& x, const Pack16& r) {
  Pack16 v;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float2 a = InTraits<TIn>::to_float2(x.u[j]);
    const float2 b = InTraits<TIn>::to_float2(r.u[j]);
    v.u[j] = InTraits<TIn>::from_float2(make_float2(__fadd_rn(a.x, b.x), __fadd_rn(a.y, b.y)));
  }
  return v;
}

template <class TIn>
__device__ __forceinline__ float sumsq8(const Pack16& v, float acc) {
  float f[8];
  unpack8<TIn>(v, f);
#pragma unroll
  for (int j = 0; j < 8; ++j) acc = fmaf(f[j], f[j], acc);
  return acc;
}

// SiLU (fused_rmsnorm_silu's epilogue): y * sigmoid(y), by the fast division (a reciprocal and a
// product, within 2 ulp of fp32, far inside the 16-bit output's rounding; the IEEE division's
// ~10 instructions an element left the kernel 5% behind rmsnorm). A denominator of 2^126 or more
// (y < -87) gives 0 where the quotient is below 1e-36.
__device__ __forceinline__ float silu(float y) { return __fdividef(y, 1.0f + __expf(-y)); }

// y = x * scale * (w + weight_offset) of 8 elements (the row's normalised, weighted values).
template <class TIn>
__device__ __forceinline__ void normalize8(const Pack16& x, const Pack16& w, float scale, float weight_offset,
                                           float (&y)[8]) {
  float f[8], g[8];
  unpack8<TIn>(x, f);
  unpack8<TIn>(w, g);
#pragma unroll
  for (int j = 0; j < 8; ++j) y[j] = (f[j] * scale) * (g[j] + weight_offset);
}

template <class TIn, class TOut, bool kSilu = false>
__device__ __forceinline__ void normalize_store8(void* p, const Pack16& x, const Pack16& w, float scale,
                                                 float weight_offset) {
  float y[8];
  normalize8<TIn>(x, w, scale, weight_offset, y);
  if constexpr (kSilu) {
#pragma unroll
    for (int j = 0; j < 8; ++j) y[j] = silu(y[j]);
  }
  OutTraits<TOut>::store8(p, y);
}

// Sum over the threads of one row (threadIdx.y): threads_per_row is a power of two <= 32 or a
// multiple of 32; blockDim.x * blockDim.y is a multiple of 32. Every thread of the block must call
// it (it may contain a barrier); every thread of the row gets the total.
__device__ __forceinline__ float row_sum(float v) {
  const unsigned tpr = blockDim.x;
  if (tpr <= 32) {
    for (unsigned offset = tpr >> 1; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  __shared__ float partial[32];
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warps_per_row = tpr >> 5;
  const unsigned first_warp = threadIdx.y * warps_per_row;
  if (lane == 0) partial[first_warp + (threadIdx.x >> 5)] = v;
  __syncthreads();
  v = lane < warps_per_row ? partial[first_warp + lane] : 0.0f;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float row_scale(float sum_sq, const Args& a) {
  return rsqrtf(fmaf(sum_sq, a.inv_hidden, a.eps)) * a.out_scale;
}

// ------------------------------------------------------------------------------------------------
// Register path: the whole row lives in registers, one pass over HBM.
// ------------------------------------------------------------------------------------------------

// The register path's row: loads, fused add, sum of squares, weight, and the row's scale; then
// `epilogue(x, w, ok, scale)` once with the thread's kVpt vectors (vector k is the row's vector
// threadIdx.x + k * blockDim.x; x[k]: its 8 elements, zero where !ok[k]; ok[k]: it lies in a real
// row and inside hidden; w[k]: the weight's). Every thread calls it, masked or not, so it may use
// warp shuffles.
// Shared by rmsnorm_reg_kernel and the fused FP4 norms (rmsnorm_fp4_kernel.cuh).
template <class TIn, bool kFused, int kVpt, class Epilogue>
__device__ __forceinline__ void rmsnorm_registers(const Args& a, int64_t row, Epilogue&& epilogue) {
  static_assert(sizeof(TIn) == 2);
  const int tpr = static_cast<int>(blockDim.x);
  const bool row_ok = row < a.rows;
  const int nvec = static_cast<int>(a.hidden >> 3);
  const char* in_row = static_cast<const char*>(a.input) + row * a.input_stride * 2;
  char* res_row = static_cast<char*>(a.residual) + row * a.residual_stride * 2;
  const char* w_ptr = static_cast<const char*>(a.weight);

  pdl_wait();

  // All of the row's loads in flight at once. The weight (shared by every row, so mostly an L1 /
  // L2 hit) is only prefetched here and loaded once the sum of squares is done: holding it in
  // registers from the start would cost 4 more registers per vector at the peak.
  Pack16 x[kVpt];
  bool ok[kVpt];
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * tpr;
    ok[k] = row_ok && i < nvec;
    x[k] = ok[k] ? ld_stream16(in_row + i * 16) : Pack16{};
  }
  [[maybe_unused]] Pack16 r[kFused ? kVpt : 1];
  if constexpr (kFused) {
#pragma unroll
    for (int k = 0; k < kVpt; ++k) {
      const int i = static_cast<int>(threadIdx.x) + k * tpr;
      r[k] = ok[k] ? ld_stream16(res_row + i * 16) : Pack16{};
    }
  }
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * tpr;
    if (ok[k]) prefetch_l1(w_ptr + i * 16);
  }
  pdl_launch_dependents();

  float sum_sq = 0.0f;
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    if constexpr (kFused) {
      if (ok[k]) {
        const int i = static_cast<int>(threadIdx.x) + k * tpr;
        x[k] = add_round8<TIn>(x[k], r[k]);
        st_stream16(res_row + i * 16, x[k]);
      }
    }
    sum_sq = sumsq8<TIn>(x[k], sum_sq);  // masked vectors are zero
  }
  // Keep the row packed (4 registers per vector) across the reduction and unpack it again
  // afterwards. a.zero is 0, but the compiler cannot know it, so it cannot reuse the unpacked
  // floats of the sum of squares (which would double the live registers).
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
#pragma unroll
    for (int j = 0; j < 4; ++j) x[k].u[j] ^= a.zero;
  }
  // The weight loads (all in flight together) overlap the reduction. Their addresses depend on
  // sum_sq (through a.zero), so the compiler cannot hoist them above the sum of squares, where
  // they would raise the register peak.
  const char* w_base = w_ptr + (__float_as_uint(sum_sq) & a.zero);
  Pack16 w[kVpt];
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * tpr;
    w[k] = ok[k] ? ld_weight16(w_base + i * 16) : Pack16{};
  }
  epilogue(x, w, ok, row_scale(row_sum(sum_sq), a));
}

// Blocks are at most 512 threads. 4 vectors per thread (the common case) asks for 2 blocks of 512
// per SM, i.e. <= 64 registers: ptxas then settles at 48 (62 with the fused add), which leaves
// 5 (4) blocks of 256 threads per SM.
template <class TIn, class TOut, bool kFused, int kVpt, bool kSilu = false>
__global__ void __launch_bounds__(512, kVpt == 4 ? 2 : 1) rmsnorm_reg_kernel(const Args a) {
  constexpr int kOutBytes8 = OutTraits<TOut>::kBytes8;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
  char* out_row = static_cast<char*>(a.output) + row * a.output_stride * static_cast<int64_t>(sizeof(TOut));
  rmsnorm_registers<TIn, kFused, kVpt>(a, row, [&](const auto& x, const auto& w, const auto& ok, float scale) {
#pragma unroll
    for (int k = 0; k < kVpt; ++k) {
      if (!ok[k]) continue;
      const int64_t i = static_cast<int64_t>(threadIdx.x) + k * static_cast<int64_t>(blockDim.x);
      normalize_store8<TIn, TOut, kSilu>(out_row + i * kOutBytes8, x[k], w[k], scale, a.weight_offset);
    }
  });
}

// ------------------------------------------------------------------------------------------------
// Loop paths: two passes over the row (the second from L2), vectorized or scalar.
// ------------------------------------------------------------------------------------------------

template <class TIn, class TOut, bool kFused, bool kVector, bool kSilu = false>
__global__ void __launch_bounds__(1024) rmsnorm_loop_kernel(const Args a) {
  static_assert(sizeof(TIn) == 2);
  constexpr int kUnroll = 4;
  constexpr int kElems = kVector ? 8 : 1;  // elements per access
  constexpr int64_t kInBytes = 2 * kElems;
  constexpr int64_t kOutBytes = static_cast<int64_t>(sizeof(TOut)) * kElems;
  using Elem = std::conditional_t<kVector, Pack16, uint16_t>;
  using In = InTraits<TIn>;

  const int64_t tpr = blockDim.x;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool row_ok = row < a.rows;
  const int64_t n = a.hidden / kElems;
  const char* in_row = static_cast<const char*>(a.input) + row * a.input_stride * 2;
  char* res_row = static_cast<char*>(a.residual) + row * a.residual_stride * 2;
  char* out_row = static_cast<char*>(a.output) + row * a.output_stride * static_cast<int64_t>(sizeof(TOut));
  const char* w_ptr = static_cast<const char*>(a.weight);

  auto load = [](const char* p) -> Elem {
    if constexpr (kVector) {
      return ld_plain16(p);
    } else {
      return *reinterpret_cast<const uint16_t*>(p);
    }
  };

  pdl_wait();

  // Pass 1: (fused: add, round, store residual) and the sum of squares.
  float sum_sq = 0.0f;
  if (row_ok) {
    for (int64_t base = threadIdx.x; base < n; base += kUnroll * tpr) {
      Elem x[kUnroll];
      [[maybe_unused]] Elem r[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + u * tpr;
        x[u] = i < n ? load(in_row + i * kInBytes) : Elem{};
      }
      if constexpr (kFused) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t i = base + u * tpr;
          r[u] = i < n ? load(res_row + i * kInBytes) : Elem{};
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + u * tpr;
        if constexpr (kFused) {
          if (i < n) {
            if constexpr (kVector) {
              x[u] = add_round8<TIn>(x[u], r[u]);
              st_plain16(res_row + i * kInBytes, x[u]);
            } else {
              x[u] = In::from_float(__fadd_rn(In::to_float(x[u]), In::to_float(r[u])));
              *reinterpret_cast<uint16_t*>(res_row + i * kInBytes) = x[u];
            }
          }
        }
        if constexpr (kVector) {
          sum_sq = sumsq8<TIn>(x[u], sum_sq);
        } else {
          const float f = In::to_float(x[u]);
          sum_sq = fmaf(f, f, sum_sq);
        }
      }
    }
  }
  const float scale = row_scale(row_sum(sum_sq), a);
  pdl_launch_dependents();

  // Pass 2: re-read v (the stored residual for the fused add) and the weight; write the output.
  if (row_ok) {
    const char* src = kFused ? res_row : in_row;
    for (int64_t base = threadIdx.x; base < n; base += kUnroll * tpr) {
      Elem x[kUnroll];
      Elem w[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + u * tpr;
        x[u] = i < n ? load(src + i * kInBytes) : Elem{};
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + u * tpr;
        if constexpr (kVector) {
          w[u] = i < n ? ld_weight16(w_ptr + i * kInBytes) : Elem{};
        } else {
          w[u] = i < n ? __ldg(reinterpret_cast<const unsigned short*>(w_ptr + i * kInBytes)) : Elem{};
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + u * tpr;
        if (i < n) {
          if constexpr (kVector) {
            normalize_store8<TIn, TOut, kSilu>(out_row + i * kOutBytes, x[u], w[u], scale, a.weight_offset);
          } else {
            float y = (In::to_float(x[u]) * scale) * (In::to_float(w[u]) + a.weight_offset);
            if constexpr (kSilu) y = silu(y);
            OutTraits<TOut>::store1(out_row + i * kOutBytes, y);
          }
        }
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Host side: pick the instantiation for a plan and launch it (instantiated once per TU).
// ------------------------------------------------------------------------------------------------

// `kernel` on the plan's grid (a block per rows_per_block rows of threads_per_row threads).
template <class KernelArgs>
cudaError_t launch_planned(void (*kernel)(KernelArgs), const Plan& plan, bool pdl, const KernelArgs& args,
                           cudaStream_t stream) {
  return launch_kernel(kernel, dim3(static_cast<unsigned>(plan.blocks), 1, 1),
                       dim3(static_cast<unsigned>(plan.threads_per_row), static_cast<unsigned>(plan.rows_per_block), 1), 0,
                       stream, pdl, args);
}

template <class TIn, class TOut, bool kSilu = false>
cudaError_t launch_typed(const Args& args, const Plan& plan, bool fused, bool pdl, cudaStream_t stream) {
  // The SiLU epilogue has no fused-add instantiation (fused_rmsnorm_silu has no residual).
  constexpr bool kF = !kSilu;
  void (*kernel)(Args) = nullptr;
  if (kSilu && fused) return cudaErrorInvalidValue;
  switch (plan.path) {
    case Path::kRegisters:
      switch (plan.vpt) {
        case 1:
          kernel = fused ? rmsnorm_reg_kernel<TIn, TOut, kF, 1, kSilu> : rmsnorm_reg_kernel<TIn, TOut, false, 1, kSilu>;
          break;
        case 4:
          kernel = fused ? rmsnorm_reg_kernel<TIn, TOut, kF, 4, kSilu> : rmsnorm_reg_kernel<TIn, TOut, false, 4, kSilu>;
          break;
        case 8:
          kernel = fused ? rmsnorm_reg_kernel<TIn, TOut, kF, 8, kSilu> : rmsnorm_reg_kernel<TIn, TOut, false, 8, kSilu>;
          break;
        default: break;
      }
      break;
    case Path::kLoopVector:
      kernel = fused ? rmsnorm_loop_kernel<TIn, TOut, kF, true, kSilu> : rmsnorm_loop_kernel<TIn, TOut, false, true, kSilu>;
      break;
    case Path::kLoopScalar:
      kernel = fused ? rmsnorm_loop_kernel<TIn, TOut, kF, false, kSilu> : rmsnorm_loop_kernel<TIn, TOut, false, false, kSilu>;
      break;
  }
  if (kernel == nullptr) return cudaErrorInvalidValue;
  return launch_planned(kernel, plan, pdl, args, stream);
}

#endif  // __CUDACC__

}  // namespace kbench::kernels::rmsnorm_detail
