// Shared-memory accesses by address (a 32-bit shared-window address, as the TMA, wgmma and stmatrix
// helpers take): 16-byte vectors both ways, 8-byte loads and 16-bit stores, for swizzled layouts the compiler
// cannot see through (MLA fa3's raw tiles and V buffers, the wgmma GEMM's epilogue staging).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kbench::kernels {

__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}

__device__ __forceinline__ uint2 ld_shared_v2(uint32_t addr) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(addr));
  return v;
}

__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

__device__ __forceinline__ void st_shared_u16(uint32_t addr, uint32_t value) {
  asm volatile("st.shared.u16 [%0], %1;" ::"r"(addr), "h"(static_cast<uint16_t>(value)) : "memory");
}

}  // namespace kbench::kernels
