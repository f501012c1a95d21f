#include "core/device_info.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "kbench/cuda_check.hpp"

namespace kbench {

std::string DeviceInfo::gpu_name() const {
  std::string n = name;
  std::replace(n.begin(), n.end(), ' ', '_');
  return n;
}

std::optional<DeviceInfo> query_device(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    if (why != nullptr) {
      *why = status != cudaSuccess ? std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status)
                                   : std::string("cudaGetDeviceCount found 0 devices");
    }
    (void)cudaGetLastError();
    return std::nullopt;
  }
  DeviceInfo info;
  KBENCH_CUDA_CHECK(cudaGetDevice(&info.index));
  cudaDeviceProp prop{};
  KBENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, info.index));
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.total_memory = prop.totalGlobalMem;
  return info;
}

std::size_t free_device_memory() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  KBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

}  // namespace kbench
