// kbench's own MLA decode kernel "fa3" (Hopper, sm_90a: wgmma, mbarriers, setmaxnreg): host-side
// API. The problem is mla.hpp's (MlaParams); this kernel takes head dims 512 / 64, bfloat16 caches
// with bfloat16 q (one scale for ckv and kpe), and fp8 e4m3 caches with bfloat16 or fp8 e4m3 q
// (mla_kernel_supported: fp8 is widened to bf16 exactly in shared memory). The plan (64-row blocks, KV splits, workspace: mla_split.hpp)
// is made on the host, outside timing, from the longest KV length; the launch is graph-safe.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/attention/mla/mla.hpp"
#include "kernels/attention/mla/mla_split.hpp"

namespace kbench::kernels {

// Whether kernel fa3 takes this q / KV dtype pair (mla_kernel_dtypes_supported).
[[nodiscard]] bool mla_fa3_dtypes_supported(DType q_dtype, DType kv_dtype);
// Whether kernel fa3 takes this problem (dtypes, head dims, sizes, scales); no pointer is looked at.
[[nodiscard]] bool mla_fa3_supported(const MlaParams& params);
// cudaSuccess where the current device is sm_90 and this build has the kernel's sm_90a image.
[[nodiscard]] cudaError_t mla_fa3_available();
// The plan (64 rows per CTA; splits of whole 64-key tiles, or a balanced schedule where the lengths
// differ: plan_mla_balanced): kv_lens the batch's kv_len, sm_count the device's SMs.
[[nodiscard]] MlaPlan plan_mla_fa3(const MlaParams& params, std::span<const int32_t> kv_lens, int sm_count);
// out: [batch * s_qo][num_heads][512] bfloat16; workspace: plan.workspace_bytes(params) bytes
// (may be null when that is 0), holding the plan's schedule (upload_mla_schedule) if balanced.
[[nodiscard]] cudaError_t launch_mla_fa3(const MlaParams& params, const MlaPlan& plan, void* out, void* workspace,
                                         cudaStream_t stream);

}  // namespace kbench::kernels
