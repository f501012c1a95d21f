// Times your own kernel with kbench's timing engine: CUPTI activity timing, CUDA graph replays and a
// cold L2 before every replay, as FlashInfer's bench_gpu_time does by default.
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>

#include "kbench/device_buffer.hpp"
#include "kbench/timing.hpp"

__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "time_my_kernel: no CUDA device present; this example needs an NVIDIA GPU\n");
    return 1;
  }
  try {
    // --- your code: inputs, one launch on the given stream, and the bytes it moves ---
    constexpr int n = 1 << 24;
    const kbench::DeviceBuffer x(n * sizeof(float));
    const kbench::DeviceBuffer y(n * sizeof(float));
    KBENCH_CUDA_CHECK(cudaMemset(x.get(), 0, x.bytes()));
    KBENCH_CUDA_CHECK(cudaMemset(y.get(), 0, y.bytes()));
    const kbench::TimingResult result = kbench::time_gpu(
        [&](cudaStream_t stream, int /*copy*/) {
          saxpy<<<(n + 255) / 256, 256, 0, stream>>>(n, 2.0f, x.as<float>(), y.as<float>());
        },
        kbench::TimingOptions{});
    const double bytes_moved = 3.0 * n * sizeof(float);  // read x and y, write y
    // --- end of your code ---

    for (const auto& warning : result.warnings) std::fprintf(stderr, "warning: %s\n", warning.c_str());
    std::printf("saxpy n=%d, timer %s: median %.4f ms, min %.4f ms, max %.4f ms, %.1f GB/s\n", n,
                kbench::timer_name(result.timer).data(), result.stats.median, result.stats.min, result.stats.max,
                bytes_moved / (result.stats.median * 1e-3) / 1e9);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "time_my_kernel: %s\n", error.what());
    return 1;
  }
}
