// The MoE's 16-bit activations (bf16 or fp16, chosen at run time: one kernel serves both) as floats
// and back, round to nearest even, on the host and the device alike (cuda_fp16 / cuda_bf16 are
// host-device).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace kbench::kernels::moe {

#if defined(__CUDACC__)
#define KBENCH_MOE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define KBENCH_MOE_HOST_DEVICE inline
#endif

KBENCH_MOE_HOST_DEVICE float half_bits_to_float(uint16_t bits, bool fp16) {
  return fp16 ? __half2float(__ushort_as_half(bits)) : __bfloat162float(__ushort_as_bfloat16(bits));
}

KBENCH_MOE_HOST_DEVICE uint16_t float_to_half_bits(float value, bool fp16) {
  return fp16 ? __half_as_ushort(__float2half_rn(value)) : __bfloat16_as_ushort(__float2bfloat16_rn(value));
}

#undef KBENCH_MOE_HOST_DEVICE

}  // namespace kbench::kernels::moe
