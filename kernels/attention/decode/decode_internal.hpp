// Private to kernels/attention/decode: how launch_decode reaches each kernel. Each kernel runs the
// work items of a DecodeWorkspace and writes either the final output (partial_slot < 0) or its
// partial output and log-sum-exp (see DecodePlan's workspace layout); launch_decode runs the merge.
#pragma once

#include "kernels/attention/decode/decode.hpp"

namespace kbench::kernels::decode_detail {

// CUDA-core kernel (decode_fa2.cu).
[[nodiscard]] bool fa2_supported(const DecodeParams& params);
[[nodiscard]] cudaError_t launch_fa2(const DecodeParams& params, const DecodeWorkspace& workspace,
                                     cudaStream_t stream);

// Tensor-core kernel (decode_fa2_tc*.cu).
[[nodiscard]] bool fa2_tc_supported(const DecodeParams& params);
[[nodiscard]] cudaError_t launch_fa2_tc(const DecodeParams& params, const DecodeWorkspace& workspace,
                                        cudaStream_t stream);

}  // namespace kbench::kernels::decode_detail
