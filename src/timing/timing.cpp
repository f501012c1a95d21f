#include "kbench/timing.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cupti_activity_timer.hpp"
#include "l2_flush.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"

namespace kbench {
namespace {

// Owning CUDA handles: the destroy calls' status is ignored, as in any destructor.
template <class Handle, cudaError_t (*Destroy)(Handle)>
struct CudaDestroyer {
  void operator()(Handle handle) const noexcept { (void)Destroy(handle); }
};
template <class Handle, cudaError_t (*Destroy)(Handle)>
using CudaHandle = std::unique_ptr<std::remove_pointer_t<Handle>, CudaDestroyer<Handle, Destroy>>;

using Event = CudaHandle<cudaEvent_t, cudaEventDestroy>;
using Graph = CudaHandle<cudaGraph_t, cudaGraphDestroy>;
using GraphExec = CudaHandle<cudaGraphExec_t, cudaGraphExecDestroy>;

[[nodiscard]] Event make_event() {
  cudaEvent_t event = nullptr;
  KBENCH_CUDA_CHECK(cudaEventCreate(&event));
  return Event(event);
}

template <class Value>
void require_option(bool valid, const char* field, Value value, const char* rule) {
  if (!valid) {
    throw std::invalid_argument(std::string("TimingOptions::") + field + " must be " + rule + ", got " +
                                std::to_string(value));
  }
}

void validate(const TimingOptions& options) {
  require_option(options.num_iters >= 1, "num_iters", options.num_iters, ">= 1");
  require_option(options.dry_run_iters >= 0, "dry_run_iters", options.dry_run_iters, ">= 0");
  require_option(options.calls_per_graph >= 1, "calls_per_graph", options.calls_per_graph, ">= 1");
  require_option(options.num_copies >= 1, "num_copies", options.num_copies, ">= 1");
  require_option(options.max_noise >= 0, "max_noise", options.max_noise, ">= 0");
  require_option(options.min_time_s >= 0, "min_time_s", options.min_time_s, ">= 0");
  require_option(options.timeout_s > 0, "timeout_s", options.timeout_s, "> 0");
}

// 2x the L2 of `device`, kept for the process: allocating ~100 MB on every call would cost more
// than many measurements.
[[nodiscard]] const DeviceBuffer& l2_flush_buffer(int device) {
  static std::mutex mutex;
  static std::map<int, DeviceBuffer> buffers;
  const std::lock_guard lock(mutex);
  auto found = buffers.find(device);
  if (found == buffers.end()) {
    int l2_bytes = 0;
    KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    found = buffers.emplace(device, DeviceBuffer(2 * static_cast<std::size_t>(l2_bytes))).first;
    // Zeroed once, so the flush never reads uninitialised memory.
    KBENCH_CUDA_CHECK(cudaMemset(found->second.get(), 0, found->second.bytes()));
  }
  return found->second;
}

// Captures calls_per_graph calls (copy i % num_copies) into an executable graph. On failure the
// capture is ended, the error cleared, the reason added to `warnings`, and the result is empty.
[[nodiscard]] GraphExec capture_graph(const LaunchFn& launch, cudaStream_t stream, const TimingOptions& options,
                                      std::vector<std::string>& warnings) {
  const auto give_up = [&](const std::string& reason) {
    (void)cudaGetLastError();
    warnings.push_back("CUDA graph capture failed (" + reason + "); launching calls directly");
    return GraphExec();
  };
  if (const cudaError_t status = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
      status != cudaSuccess) {
    return give_up(cudaGetErrorString(status));
  }
  // A callable that throws on a capture-only failure (e.g. KBENCH_CUDA_CHECK of a forbidden call)
  // gets its direct launches instead; a genuine error will throw again there.
  std::optional<std::string> launch_error;
  try {
    for (int call = 0; call < options.calls_per_graph; ++call) launch(stream, call % options.num_copies);
  } catch (const std::exception& error) {
    launch_error = error.what();
  }
  cudaGraph_t raw_graph = nullptr;
  const cudaError_t end_status = cudaStreamEndCapture(stream, &raw_graph);
  const Graph graph(raw_graph);
  if (launch_error) return give_up(*launch_error);
  if (end_status != cudaSuccess) return give_up(cudaGetErrorString(end_status));

  cudaGraphExec_t exec = nullptr;
  if (const cudaError_t status = cudaGraphInstantiate(&exec, graph.get(), 0); status != cudaSuccess) {
    return give_up(cudaGetErrorString(status));
  }
  return GraphExec(exec);
}

// Times iterations with one event pair around each.
class EventClock {
 public:
  EventClock(cudaStream_t stream, int iterations) : stream_(stream) {
    for (int i = 0; i < iterations; ++i) {
      starts_.push_back(make_event());
      stops_.push_back(make_event());
    }
  }
  void begin(int iteration) { KBENCH_CUDA_CHECK(cudaEventRecord(starts_.at(iteration).get(), stream_)); }
  void end(int iteration) { KBENCH_CUDA_CHECK(cudaEventRecord(stops_.at(iteration).get(), stream_)); }
  [[nodiscard]] std::vector<double> per_iteration_ms() {
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));  // once, after every event is recorded
    std::vector<double> milliseconds;
    for (std::size_t i = 0; i < starts_.size(); ++i) {
      float elapsed = 0;
      KBENCH_CUDA_CHECK(cudaEventElapsedTime(&elapsed, starts_[i].get(), stops_[i].get()));
      milliseconds.push_back(elapsed);
    }
    return milliseconds;
  }

 private:
  cudaStream_t stream_;
  std::vector<Event> starts_;
  std::vector<Event> stops_;
};

template <class Clock>
concept IterationClock = requires(Clock clock, int iteration) {
  clock.begin(iteration);
  clock.end(iteration);
  { clock.per_iteration_ms() } -> std::same_as<std::vector<double>>;
};

// What every measured iteration does, whichever clock times it.
struct MeasuredLoop {
  cudaStream_t stream;
  int iterations;
  const DeviceBuffer* l2_flush;  // null: warm L2
  std::function<void(int iteration)> run;
};

template <IterationClock Clock>
[[nodiscard]] std::vector<double> measure(Clock& clock, const MeasuredLoop& loop) {
  for (int i = 0; i < loop.iterations; ++i) {
    // Before the clock opens: the flush is stream-ordered ahead of the start event, and launched
    // outside the CUPTI correlation scope so its memset record is never attributed.
    if (loop.l2_flush != nullptr && loop.l2_flush->bytes() > 0) {
      KBENCH_CUDA_CHECK(detail::launch_l2_flush(loop.l2_flush->get(), loop.l2_flush->bytes(), loop.stream));
    }
    clock.begin(i);
    loop.run(i);
    clock.end(i);
  }
  KBENCH_CUDA_CHECK(cudaGetLastError());  // a failed launch must not pass as a fast one
  return clock.per_iteration_ms();
}

}  // namespace

TimingResult time_gpu(const LaunchFn& launch, const TimingOptions& options) {
  validate(options);
  int device = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  const CudaStream stream;
  const DeviceBuffer* l2_flush = options.cold_l2 ? &l2_flush_buffer(device) : nullptr;
  TimingResult result;

  // Warm-up, also loading modules and filling lazy allocations before anything is captured.
  for (int i = 0; i < options.dry_run_iters; ++i) launch(stream.get(), i % options.num_copies);
  KBENCH_CUDA_CHECK(cudaGetLastError());
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  // Started before capture, so the graph is instantiated while CUPTI is tracing, as under a profiler.
  std::optional<detail::CuptiActivityTimer> cupti;
  if (options.use_cupti) {
    try {
      cupti.emplace(device);
    } catch (const detail::CuptiUnavailable& error) {
      result.warnings.push_back(std::string("CUPTI unavailable (") + error.what() + "); timing with CUDA events");
    }
  }

  GraphExec graph;
  if (options.use_cuda_graph) graph = capture_graph(launch, stream.get(), options, result.warnings);
  if (graph) KBENCH_CUDA_CHECK(cudaGraphLaunch(graph.get(), stream.get()));  // warm-up replay

  result.timer = cupti ? Timer::cupti : graph ? Timer::cuda_graph : Timer::cuda_events;
  result.calls_per_graph = graph ? options.calls_per_graph : 0;
  const MeasuredLoop loop{
      .stream = stream.get(),
      .iterations = options.num_iters,
      .l2_flush = l2_flush,
      .run =
          [&](int iteration) {
            if (graph) {
              KBENCH_CUDA_CHECK(cudaGraphLaunch(graph.get(), stream.get()));
            } else {
              launch(stream.get(), iteration % options.num_copies);
            }
          },
  };
  const int calls_per_iteration = std::max(result.calls_per_graph, 1);
  const auto measure_batch = [&] {
    std::vector<double> batch;
    if (cupti) {
      batch = measure(*cupti, loop);  // a batch's records are drained with it: its indices are reused
    } else {
      EventClock events(stream.get(), options.num_iters);
      batch = measure(events, loop);
    }
    for (double& milliseconds : batch) milliseconds /= calls_per_iteration;
    result.samples_ms.insert(result.samples_ms.end(), batch.begin(), batch.end());
    result.stats = summarize(result.samples_ms);
  };

  std::optional<GpuMonitor> monitor;
  if (options.monitor_gpu) monitor.emplace(device);
  measure_batch();
  if (options.max_noise > 0) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(options.timeout_s));
    const auto measured_s = [&] { return result.stats.mean * 1e-3 * calls_per_iteration * result.samples_ms.size(); };
    while (result.stats.noise > options.max_noise || measured_s() < options.min_time_s) {
      if (Clock::now() >= deadline) {
        result.noise_reached = result.stats.noise <= options.max_noise;
        break;
      }
      measure_batch();
    }
  }
  if (monitor) result.conditions = monitor->stop();
  return result;
}

int cold_l2_copies(std::size_t working_set_bytes, int calls_per_graph, std::size_t l2_bytes) {
  const std::size_t sweep_bytes = 2 * l2_bytes;
  // A call that touches nothing, or more than the sweep itself, cannot be warmed by an earlier one.
  if (working_set_bytes == 0 || working_set_bytes >= sweep_bytes) return 1;
  // Between two uses of one copy the other (copies - 1) run: together they must sweep 2x the L2.
  const std::size_t copies = (sweep_bytes + working_set_bytes - 1) / working_set_bytes + 1;
  const auto most = static_cast<std::size_t>(std::max(calls_per_graph, 1));
  return static_cast<int>(std::min(copies, most));
}

}  // namespace kbench
