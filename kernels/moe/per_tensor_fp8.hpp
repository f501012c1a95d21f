// Per-tensor FP8 e4m3 for the MoE's inputs, made outside timing: `count` values (fp32, bf16 or fp16)
// under one dequantization scale s, q = e4m3(x / s) saturated (permute_quantize.hpp's
// per_tensor_quantize), s either given or amax / 448 (cutlass_fused_moe's fp8 recipe, its weights
// per expert and its activation's static scale). Everything stays on the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kbench/dtype.hpp"

namespace kbench::kernels::moe {

struct PerTensorFp8Params {
  const void* input = nullptr;
  DType dtype = DType::float32;  // float32, bfloat16 or float16
  int64_t count = 0;
  // The scale: `fixed_scale` where > 0, else amax / 448 (at least 1e-12 / 448), found with `amax`
  // (one float of scratch, zeroed by the launch).
  float fixed_scale = 0.0f;
  float* amax = nullptr;
  float* scale = nullptr;      // receives s (device)
  uint8_t* output = nullptr;   // [count] codes, or null: the scale only
};

// cudaErrorInvalidValue on a bad size, dtype or a missing pointer. No host synchronisation.
cudaError_t launch_per_tensor_fp8(const PerTensorFp8Params& params, cudaStream_t stream);

}  // namespace kbench::kernels::moe
