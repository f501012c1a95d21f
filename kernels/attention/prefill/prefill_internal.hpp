// Private to kernels/attention/prefill: how prefill_launch.cu reaches each kernel family. Each
// kernel runs the work items of a PrefillWorkspace (plan_prefill, made with its block_m) and writes
// the final output of its rows.
#pragma once

#include "kernels/attention/prefill/prefill.hpp"

namespace kbench::kernels::prefill_detail {

// FlashAttention-2 style kernel on mma.sync (sm80/).
[[nodiscard]] int fa2_block_m(const PrefillParams& params);
[[nodiscard]] int fa2_ctas_per_sm(const PrefillParams& params);  // resident at once (one CTA per item)
[[nodiscard]] bool fa2_supported(const PrefillParams& params);  // dtypes and shapes
[[nodiscard]] cudaError_t fa2_available();                      // machine code for this device
[[nodiscard]] cudaError_t launch_fa2(const PrefillParams& params, const PrefillWorkspace& workspace,
                                     cudaStream_t stream);

// FlashAttention-3 style kernel on TMA + wgmma (sm90/).
[[nodiscard]] int fa3_block_m(const PrefillParams& params);
[[nodiscard]] int fa3_ctas_per_sm(const PrefillParams& params);  // its persistent grid: this x SMs
[[nodiscard]] bool fa3_supported(const PrefillParams& params);  // dtypes and shapes
[[nodiscard]] cudaError_t fa3_available();                      // sm_90a machine code for this device
[[nodiscard]] cudaError_t launch_fa3(const PrefillParams& params, const PrefillWorkspace& workspace,
                                     cudaStream_t stream);

}  // namespace kbench::kernels::prefill_detail
