// Programmatic dependent launch (sm_90+): both are no-ops before sm_90 and when the grid was
// launched without the programmatic-stream-serialization attribute.
#pragma once

namespace kbench::kernels {

// Waits for the preceding grid's memory to be visible: before the first global read.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next grid start launching: once this block no longer holds it back.
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

}  // namespace kbench::kernels
