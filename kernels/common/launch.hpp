// Host-side launch helpers shared by the kernel families (CUDA runtime only, no device code).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

namespace kbench::kernels {

// Per-device memos of device queries, so that launches do not repeat them on every call: one array
// per query (a static of the caller's), a slot per device below kMemoDevices.
inline constexpr int kMemoDevices = 64;
template <class T>
using DeviceMemo = std::atomic<T>[kMemoDevices];

// *value for the current device: the memo's, or query(device, value) run until it succeeds with a
// positive value, which the memo then keeps.
template <class T, class Query>
[[nodiscard]] cudaError_t memo_per_device(DeviceMemo<T>& memo, Query&& query, T* value) {
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  const bool slot = device >= 0 && device < kMemoDevices;
  if (slot) {
    const T cached = memo[device].load(std::memory_order_relaxed);
    if (cached > 0) {
      *value = cached;
      return cudaSuccess;
    }
  }
  status = query(device, value);
  if (status == cudaSuccess && slot && *value > 0) memo[device].store(*value, std::memory_order_relaxed);
  return status;
}

// memo_per_device of one device attribute.
[[nodiscard]] inline cudaError_t memo_attribute(DeviceMemo<int>& memo, cudaDeviceAttr attribute, int* value) {
  return memo_per_device(
      memo, [attribute](int device, int* v) { return cudaDeviceGetAttribute(v, attribute, device); }, value);
}

// Raises kKernel's dynamic shared-memory limit to `bytes` and asks for the largest shared-memory
// carveout (so that as many CTAs as the shared memory allows fit per SM), once per device (the
// current one). Idempotent attribute calls and no synchronisation, so a first launch inside a
// stream capture is fine.
template <auto kKernel>
[[nodiscard]] cudaError_t ensure_smem_limit(int bytes) {
  static std::atomic<uint64_t> done{0};  // the devices done, a bit each
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  const uint64_t bit = device >= 0 && device < 64 ? (uint64_t{1} << device) : 0;
  if (bit != 0 && (done.load(std::memory_order_acquire) & bit) != 0) return cudaSuccess;
  status = cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (status != cudaSuccess) return status;
  status = cudaFuncSetAttribute(kKernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                static_cast<int>(cudaSharedmemCarveoutMaxShared));
  if (status == cudaSuccess && bit != 0) done.fetch_or(bit, std::memory_order_acq_rel);
  return status;
}

// The current device's SM count, queried once per device (launches size their grids with it on
// every call); 132 (an H100's) where the query fails.
[[nodiscard]] inline int current_sm_count() {
  static DeviceMemo<int> memo;
  int count = 0;
  if (memo_attribute(memo, cudaDevAttrMultiProcessorCount, &count) != cudaSuccess || count <= 0) {
    (void)cudaGetLastError();
    return 132;
  }
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
