// kbench's own MLA decode kernel "fa2" (mma.sync, sm_80+): host-side API. The problem is mla.hpp's
// (MlaParams); this kernel takes head dims 512 / 64 and q / KV dtypes bfloat16 / bfloat16,
// bfloat16 / fp8 e4m3 or fp8 e4m3 / fp8 e4m3 (fp8 is widened to bf16 in shared memory; the
// per-tensor scales are applied in fp32). Other head dims and e5m2 are not implemented. The plan
// (query-row block size, KV splits, workspace: mla_split.hpp) is made on the host, outside timing,
// from the longest KV length; the launch is graph-safe (no host sync).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/attention/mla/mla.hpp"
#include "kernels/attention/mla/mla_split.hpp"

namespace kbench::kernels {

// Whether kernel fa2 takes this q / KV dtype pair (see above).
[[nodiscard]] bool mla_fa2_dtypes_supported(DType q_dtype, DType kv_dtype);
// Whether kernel fa2 takes this problem (dtypes, head dims, sizes); no pointer is looked at.
[[nodiscard]] bool mla_fa2_supported(const MlaParams& params);
// cudaSuccess where this build has the kernel's image for the current device.
[[nodiscard]] cudaError_t mla_fa2_available();
// The plan (16, 32 or 64 rows per CTA; splits of whole 32-key tiles, from the longest of kv_lens, the
// batch's kv_len), sm_count the device's SMs.
[[nodiscard]] MlaPlan plan_mla_fa2(const MlaParams& params, std::span<const int32_t> kv_lens, int sm_count);
// out: [batch * s_qo][num_heads][512] bfloat16; workspace: plan.workspace_bytes(params) bytes
// (may be null when that is 0).
[[nodiscard]] cudaError_t launch_mla_fa2(const MlaParams& params, const MlaPlan& plan, void* out, void* workspace,
                                         cudaStream_t stream);

}  // namespace kbench::kernels
