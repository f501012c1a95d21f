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

// Checks the parameters and launches the kernel; cudaErrorInvalidValue for unsupported
// combinations, else the launch status.
[[nodiscard]] cudaError_t launch_rope(const RopeParams& params, cudaStream_t stream);

// cudaSuccess when the kernel has machine code for the current device.
[[nodiscard]] cudaError_t rope_kernel_available();

}  // namespace kbench::kernels
