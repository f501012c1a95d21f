// Host-side launch helpers shared by the kernel families (CUDA runtime only, no device code).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

namespace kbench::kernels {

// Raises `kernel`'s dynamic shared-memory limit to `bytes` and asks for the largest shared-memory
// carveout (so that as many CTAs as the shared memory allows fit per SM), once per device (the
// current one, `device`): `done` is the caller's record of the devices done (a static per kernel).
// Idempotent attribute calls and no synchronisation, so a first launch inside a stream capture is
// fine.
template <class Kernel>
[[nodiscard]] cudaError_t ensure_smem_limit(Kernel kernel, int bytes, int device, std::atomic<uint64_t>& done) {
  const uint64_t bit = device >= 0 && device < 64 ? (uint64_t{1} << device) : 0;
  if (bit != 0 && (done.load(std::memory_order_acquire) & bit) != 0) return cudaSuccess;
  cudaError_t status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (status != cudaSuccess) return status;
  status = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                static_cast<int>(cudaSharedmemCarveoutMaxShared));
  if (status == cudaSuccess && bit != 0) done.fetch_or(bit, std::memory_order_acq_rel);
  return status;
}

// The current device's SM count, queried once per device and cached (launches size their grids
// with it on every call); 132 (an H100's) where the query fails.
[[nodiscard]] inline int current_sm_count() {
  static std::atomic<int> cache[64];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 132;
  }
  if (device >= 0 && device < 64) {
    const int cached = cache[device].load(std::memory_order_relaxed);
    if (cached > 0) return cached;
  }
  int count = 0;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || count <= 0) {
    (void)cudaGetLastError();
    return 132;
  }
  if (device >= 0 && device < 64) cache[device].store(count, std::memory_order_relaxed);
  return count;
}

// The launch attribute of clusters of `cluster` CTAs along x.
inline cudaLaunchAttribute cluster_attribute(int cluster) {
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(cluster);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  return attribute;
}

// cudaLaunchKernelEx of `kernel(args)`, allowing programmatic dependent launch when `pdl` (the
// kernel waits with pdl_wait before its first global read; see pdl.cuh), in clusters of `cluster`
// CTAs along x where it is above 1.
template <class Args>
[[nodiscard]] cudaError_t launch_kernel(void (*kernel)(Args), dim3 grid, dim3 block, int smem_bytes,
                                        cudaStream_t stream, bool pdl, const Args& args, int cluster = 1) {
  cudaLaunchAttribute attributes[2];
  unsigned count = 0;
  if (pdl) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  if (cluster > 1) attributes[count++] = cluster_attribute(cluster);
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = static_cast<std::size_t>(smem_bytes);
  config.stream = stream;
  config.attrs = count > 0 ? attributes : nullptr;
  config.numAttrs = count;
  return cudaLaunchKernelEx(&config, kernel, args);
}

// How many clusters of `cluster` CTAs of `kernel` fit on the current device at once (into *out).
template <class Kernel>
[[nodiscard]] cudaError_t max_active_clusters(Kernel kernel, int cluster, int threads, int smem_bytes, int* out) {
  cudaLaunchAttribute attribute = cluster_attribute(cluster);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(cluster));
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = static_cast<std::size_t>(smem_bytes);
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaOccupancyMaxActiveClusters(out, kernel, &config);
}

}  // namespace kbench::kernels
