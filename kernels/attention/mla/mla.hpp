// Multi-head latent attention (MLA) decode on a paged latent cache: host-side API of kbench's MLA
// kernels. Knows nothing of the harness. BatchMLAPagedAttentionWrapper's problem, DeepSeek style
// (the K/V projections absorbed into the query and the output): every query head reads the same
// latent cache, K = [ckv | kpe] and V = ckv.
//
// Request b has s_qo query rows r = b * s_qo + i (i = 0 .. s_qo - 1) and kv_len[b] >= s_qo keys; row
// i sees keys t < kv_len[b] - s_qo + 1 + i (causal among the new tokens, bottom-right aligned: the
// last query row sees every key). For each row r and head h:
//   s_t = sm_scale * (q_scale * ckv_scale * dot(q_nope[r][h], ckv_t) + q_scale * kpe_scale * dot(q_pe[r][h], kpe_t))
//   p   = softmax(s over the visible keys)
//   o   = ckv_scale * sum_t p_t ckv_t
// The t-th key of b sits in page kv_indices[kv_indptr[b] + t / page_size], slot t % page_size.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kbench/dtype.hpp"

namespace kbench::kernels {

struct MlaParams {
  const void* q_nope = nullptr;  // [batch * s_qo][num_heads][head_dim_ckv], contiguous
  const void* q_pe = nullptr;    // [batch * s_qo][num_heads][head_dim_kpe], contiguous
  DType q_dtype = DType::bfloat16;  // bfloat16, float16, fp8_e4m3, fp8_e5m2
  float q_scale = 1.0f;             // dequantisation multiplier of q (fp8)
  const void* ckv = nullptr;  // [num_pages][page_size][head_dim_ckv], contiguous
  const void* kpe = nullptr;  // [num_pages][page_size][head_dim_kpe], contiguous
  DType kv_dtype = DType::bfloat16;  // bfloat16, float16, fp8_e4m3, fp8_e5m2
  float ckv_scale = 1.0f;            // per-tensor dequantisation multipliers (fp8)
  float kpe_scale = 1.0f;
  const int32_t* kv_indptr = nullptr;   // [batch + 1] page offsets, device
  const int32_t* kv_indices = nullptr;  // [kv_indptr[batch]] page ids, device
  const int32_t* kv_len = nullptr;      // [batch] keys per request (>= s_qo), device
  int batch = 0;
  int s_qo = 1;
  int num_heads = 0;
  int head_dim_ckv = 512;
  int head_dim_kpe = 64;
  int page_size = 64;
  float sm_scale = 0.0f;
};

// kbench's MLA decode kernels: fa2 (mma.sync, sm_80+: mla_fa2.hpp) and fa3 (wgmma, sm_90a: mla_fa3.hpp).
enum class MlaKernel { fa2, fa3 };

// The fp32 reference: out_fp32[batch * s_qo][num_heads][head_dim_ckv]. Simple and slow (one block
// per query row and head, scalar loads, double accumulation); for the refcheck and tests.
[[nodiscard]] cudaError_t launch_mla_reference(const MlaParams& params, float* out_fp32, cudaStream_t stream);

}  // namespace kbench::kernels
