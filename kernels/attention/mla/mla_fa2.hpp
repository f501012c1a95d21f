// kbench's own MLA decode kernel "fa2" (mma.sync, sm_80+): host-side API. The problem is mla.hpp's
// (MlaParams); this kernel takes head dims 512 / 64 and q / KV dtypes bfloat16 / bfloat16,
// bfloat16 / fp8 e4m3 or fp8 e4m3 / fp8 e4m3 (fp8 is widened to bf16 in shared memory; the
// per-tensor scales are applied in fp32). Other head dims and e5m2 are not implemented. The plan (query-row block size, KV splits, workspace) is made on
// the host, outside timing, from the longest KV length; the launch is graph-safe (no host sync).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/attention/mla/mla.hpp"

namespace kbench::kernels {

struct MlaFa2Plan {
  int rows_per_cta = 64;   // query rows (token x head pairs of one request) per CTA: 16, 32 or 64
  int row_blocks = 1;      // ceil(s_qo * num_heads / rows_per_cta)
  int num_splits = 1;      // KV splits per request (1: no workspace, no merge)
  int split_keys = 0;      // keys per split (a multiple of the 32-key tile)
  [[nodiscard]] std::size_t workspace_bytes(const MlaParams& p) const;
};

// Whether kernel fa2 takes this q / KV dtype pair (see above).
[[nodiscard]] bool mla_fa2_dtypes_supported(DType q_dtype, DType kv_dtype);
// Whether kernel fa2 takes this problem (dtypes, head dims, sizes); no pointer is looked at.
[[nodiscard]] bool mla_fa2_supported(const MlaParams& params);
// cudaSuccess where this build has the kernel's image for the current device.
[[nodiscard]] cudaError_t mla_fa2_available();
// The plan: max_kv_len is the longest kv_len of the batch, sm_count the device's SMs.
[[nodiscard]] MlaFa2Plan plan_mla_fa2(const MlaParams& params, int max_kv_len, int sm_count);
// out: [batch * s_qo][num_heads][512] bfloat16; workspace: plan.workspace_bytes(params) bytes
// (may be null when that is 0).
[[nodiscard]] cudaError_t launch_mla_fa2(const MlaParams& params, const MlaFa2Plan& plan, void* out, void* workspace,
                                         cudaStream_t stream);

}  // namespace kbench::kernels
