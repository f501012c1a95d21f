// FlashInfer's FP8 RoPE kernels (flashinfer/pos_enc.cuh of flashinfer-python 0.7.2.post1:
// RopeQuantize, RopeQuantizeAppendPagedKVCache) as the `flashinfer` yardstick backend of
// rope_quantize_fp8, mla_rope_quantize_fp8 and rope_quantize_fp8_append_paged_kv_cache. No FlashInfer
// or CUTLASS header is included here: callers compile without their include paths.
//
// The arguments are kbench's own (kernels::RopeQuantizeParams, contiguous tensors, int32 indices):
// FlashInfer computes the same thing (rotation from the fp32 cos/sin cache, x times the quant scale,
// saturating fp8 stores; the paged append's slot rule; padding tokens skipped).
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

#include "kernels/rope/rope.hpp"

namespace kbench::backends::flashinfer {

// nullopt when run_rope_quantize can run this problem (the pointers are not looked at: `paged` says
// whether it is the paged append); otherwise a one-line reason.
[[nodiscard]] std::optional<std::string> rope_quantize_unsupported(const kernels::RopeQuantizeParams& params, bool paged);

// Launches FlashInfer's kernel on `stream`: no allocation, no synchronisation, CUDA-graph capturable.
[[nodiscard]] cudaError_t run_rope_quantize(const kernels::RopeQuantizeParams& params, cudaStream_t stream);

}  // namespace kbench::backends::flashinfer
