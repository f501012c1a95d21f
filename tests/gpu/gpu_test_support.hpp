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

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "run_command.hpp"

namespace kbench::testing {

// Whether the current device is sm_90 (Hopper), where the sm_90a kernels run.
inline bool device_is_sm90() {
  int device = 0, major = 0, minor = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major == 9 && minor == 0;
}

// The current device's SM count (the planners' input).
inline int device_sm_count() {
  int device = 0;
  int count = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

// `count` elements of T copied from the device (synchronises `stream`).
template <class T>
std::vector<T> to_host(const void* device, int64_t count, cudaStream_t stream) {
  std::vector<T> host(static_cast<std::size_t>(count));
  if (count > 0) {
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(host.data(), device, static_cast<std::size_t>(count) * sizeof(T),
                                      cudaMemcpyDeviceToHost, stream));
  }
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}
// `host` copied to the device memory at `dst` (enqueued on `stream`), as a T pointer.
template <class T>
T* to_device(char* dst, const std::vector<T>& host, cudaStream_t stream) {
  if (!host.empty()) {
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  return reinterpret_cast<T*>(dst);
}

// Captures what `enqueue` puts on `stream` into a CUDA graph (a status-returning callable; an
// exception ends the capture and propagates) and replays the graph `replays` times, then
// synchronises. Returns enqueue's status; the graph is replayed only when that is cudaSuccess.
template <class Enqueue>
cudaError_t capture_and_replay(cudaStream_t stream, int replays, Enqueue&& enqueue) {
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  KBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  cudaError_t status = cudaSuccess;
  try {
    status = enqueue();
  } catch (...) {
    (void)cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    throw;
  }
  KBENCH_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  if (status == cudaSuccess) {
    cudaGraphExec_t exec = nullptr;
    KBENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < replays; ++i) KBENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    KBENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
  }
  KBENCH_CUDA_CHECK(cudaGraphDestroy(graph));
  return status;
}

// Device buffers by slot (a test's enum), grown on demand and reused across the cases of a test,
// with the stream the test runs on.
template <int kSlots>
class ScratchBuffers {
 public:
  char* get(int slot, int64_t bytes) {
    DeviceBuffer& b = buffers_.at(static_cast<std::size_t>(slot));
    if (static_cast<int64_t>(b.bytes()) < bytes) {
      b = DeviceBuffer();  // free first: the new one may not fit beside it
      b = DeviceBuffer(static_cast<std::size_t>(std::max<int64_t>(bytes, 16)));
    }
    return b.as<char>();
  }
  [[nodiscard]] cudaStream_t stream() const { return stream_.get(); }

 private:
  std::array<DeviceBuffer, kSlots> buffers_;
  CudaStream stream_;
};

// Sets (or, for nullptr, unsets) an environment variable for one scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Writes `lines` to `name` in the test's temporary directory; returns the path.
inline std::string write_testlist(const std::string& name, const std::string& lines) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << lines;
  return path;
}

// Runs kbench over `testlist` with `arguments` and expects a clean run in which all `backends`
// backend runs passed their refcheck.
inline void expect_testlist_passes(const std::string& testlist, const std::string& arguments, int backends) {
  const CommandResult r = run_kbench("--testlist " + testlist + " " + arguments);
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("[INFO] Backends: " + std::to_string(backends) +
                          " passed, 0 ran without refcheck, 0 incorrect, 0 not supported, 0 failed"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("[ERROR]"), std::string::npos) << r.output;
}

}  // namespace kbench::testing
