// Shared by the GPU tests: skip cleanly (GTEST_SKIP, reported by ctest as "Skipped") where no CUDA
// device is present, so the gpu-labelled tests pass through CI on CPU-only machines.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#define KBENCH_REQUIRE_GPU()                                                          \
  do {                                                                                \
    int kbench_device_count_ = 0;                                                     \
    if (cudaGetDeviceCount(&kbench_device_count_) != cudaSuccess ||                   \
        kbench_device_count_ == 0) {                                                  \
      (void)cudaGetLastError();                                                       \
      GTEST_SKIP() << "no CUDA device present";                                       \
    }                                                                                 \
  } while (0)
