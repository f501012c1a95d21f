// Whether a kernel has machine code for the current device, from the status of probing it
// (cudaFuncGetAttributes): every "no usable image" status becomes cudaErrorNoKernelImageForDevice.
#pragma once

#include <cuda_runtime_api.h>

namespace kbench::kernels {

[[nodiscard]] inline cudaError_t kernel_image_status(cudaError_t probe) {
  if (probe == cudaSuccess) return cudaSuccess;
  (void)cudaGetLastError();
  if (probe == cudaErrorNoKernelImageForDevice || probe == cudaErrorInvalidDeviceFunction ||
      probe == cudaErrorInvalidPtx || probe == cudaErrorUnsupportedPtxVersion ||
      probe == cudaErrorInvalidKernelImage) {
    return cudaErrorNoKernelImageForDevice;
  }
  return probe;  // e.g. no device at all
}

}  // namespace kbench::kernels
