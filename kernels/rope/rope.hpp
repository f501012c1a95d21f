// kbench's rotary positional embedding kernel (apply_rope and its variants): host-side launch API.
// Knows nothing of the harness.
//
// q [tokens][q_heads][head_dim] and k [tokens][k_heads][head_dim] (bf16 or fp16, contiguous) are
// written rotated to q_out and k_out (same shapes, new tensors): dims [0, rotary_dim) of every head
// rotate by the token's position, dims [rotary_dim, head_dim) are copied unchanged.
// Pairs: NeoX (j, j + rotary_dim/2), or interleaved (2j, 2j+1); pair j turns by position * f_j.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kbench/dtype.hpp"

namespace kbench::kernels {

// Where a token's position comes from.
enum class RopePositions {
  request_offsets,  // indptr [requests + 1] and offsets [requests]: offset + index in the request
  pos_ids,          // int32 [tokens]
  positions_i64,    // int64 [tokens] (the cos/sin cache form)
};

struct RopeParams {
  const void* q = nullptr;
  const void* k = nullptr;
  void* q_out = nullptr;
  void* k_out = nullptr;
  RopePositions position_source = RopePositions::pos_ids;
  const int32_t* indptr = nullptr;
  const int32_t* offsets = nullptr;
  const int32_t* pos_ids = nullptr;
  const int64_t* positions = nullptr;
  // fp32 [cache_rows][rotary_dim]: columns [0, rotary_dim/2) cos of pair j, the rest its sin.
  // nullptr: the angles are computed from the frequency parameters below.
  const float* cos_sin_cache = nullptr;
  int64_t cache_rows = 0;
  int64_t tokens = 0;
  int64_t requests = 0;  // request_offsets only
  int q_heads = 0;
  int k_heads = 0;
  int head_dim = 0;    // a multiple of 8 (16-byte vectors)
  int rotary_dim = 0;  // a multiple of 16, at most head_dim
  bool interleave = false;
  // f_j = (1 - s) * base_j / rope_scale + s * base_j, base_j = theta^(-2j/rotary_dim),
  // s = clamp(base_j * smooth_a + smooth_b, 0, 1): Llama 3.1's scaling; a = b = 0 is plain RoPE.
  float rope_theta = 1e4f;
  float rope_scale = 1.0f;
  float smooth_a = 0.0f;
  float smooth_b = 0.0f;
  DType dtype = DType::float16;
  bool enable_pdl = false;
};

// rope_quantize_fp8, mla_rope_quantize_fp8 and rope_quantize_fp8_append_paged_kv_cache: the rotary
// part of q and k rotated by the cos/sin cache, the rotary and unrotated parts scaled and written in
// fp8 (round to nearest even, saturated to the largest finite value).
//   q_rope [tokens][q_heads][rope_dim], q_nope [tokens][q_heads][no_rope_dim] (input dtype) ->
//   q_rope_out, q_nope_out (fp8, same shapes), times quant_scale_q;
//   k_rope [tokens][k_heads][rope_dim], k_nope [tokens][k_heads][no_rope_dim] -> k_rope_out,
//   k_nope_out, times quant_scale_kv (MLA: k_heads = 1, the 2-D latent k).
// Paged append (k_cache set): K and V go to the paged caches instead of k_*_out: token t of request
// b = batch_indices[t] (skipped entirely when negative) takes slot s = kv_indptr[b] * page_size +
// positions[t], i.e. entry s % page_size of page kv_indices[s / page_size]; its K head vector is
// [rotated k_rope | k_nope] (head_dim = rope_dim + no_rope_dim), its V head vector v [tokens][k_heads]
// [head_dim], both times quant_scale_kv. Caches [pages][page_size][k_heads][head_dim] (NHD) or
// [pages][k_heads][page_size][head_dim] (HND), fp8.
struct RopeQuantizeParams {
  const void* q_rope = nullptr;
  const void* k_rope = nullptr;
  const void* q_nope = nullptr;  // no_rope_dim > 0
  const void* k_nope = nullptr;  // no_rope_dim > 0
  void* q_rope_out = nullptr;
  void* k_rope_out = nullptr;  // not paged
  void* q_nope_out = nullptr;  // no_rope_dim > 0
  void* k_nope_out = nullptr;  // not paged, no_rope_dim > 0
  const float* cos_sin_cache = nullptr;  // fp32 [cache_rows][rope_dim], as RopeParams'
  int64_t cache_rows = 0;
  const int32_t* pos_ids = nullptr;  // [tokens]: each token's row of the cache
  int64_t tokens = 0;
  int q_heads = 0;
  int k_heads = 0;
  int rope_dim = 0;     // NeoX: a multiple of 32; interleaved: of 16 (16-byte fp8 stores)
  int no_rope_dim = 0;  // a multiple of 16
  bool interleave = false;
  float quant_scale_q = 1.0f;
  float quant_scale_kv = 1.0f;
  DType dtype = DType::bfloat16;         // float16 or bfloat16
  DType quant_dtype = DType::fp8_e4m3;   // fp8_e4m3 or fp8_e5m2
  // Paged append (when k_cache is set; head_dim = rope_dim + no_rope_dim).
  const void* v = nullptr;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  const int32_t* kv_indices = nullptr;
  const int32_t* kv_indptr = nullptr;
  const int32_t* batch_indices = nullptr;
  const int32_t* positions = nullptr;
  int64_t pages = 0;
  int page_size = 0;
  bool hnd = false;
  bool enable_pdl = false;
};

[[nodiscard]] cudaError_t launch_rope_quantize(const RopeQuantizeParams& params, cudaStream_t stream);
[[nodiscard]] cudaError_t rope_quantize_kernel_available();

// Checks the parameters and launches the kernel; cudaErrorInvalidValue for unsupported
// combinations, else the launch status.
[[nodiscard]] cudaError_t launch_rope(const RopeParams& params, cudaStream_t stream);

// cudaSuccess when the kernel has machine code for the current device.
[[nodiscard]] cudaError_t rope_kernel_available();

}  // namespace kbench::kernels
