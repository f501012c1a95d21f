// kbench's timing engine: the C++ counterpart of FlashInfer's bench_gpu_time, usable on its own.
//
//   kbench::TimingOptions options;                       // CUPTI, CUDA graph, cold L2: the defaults
//   kbench::TimingResult r = kbench::time_gpu(
//       [&](cudaStream_t s, int) { my_kernel<<<grid, block, 0, s>>>(args); }, options);
//   printf("%s: median %.3f ms\n", kbench::timer_name(r.timer).data(), r.stats.median);
//
// What is measured (all times are per call, in milliseconds):
//  - Timer::cupti: CUPTI activity records. An iteration's time is the span from the first start to
//    the last end of the kernel/memcpy/memset activities launched inside that iteration, so gaps
//    between a routine's own kernels count and host launch overhead does not. The L2 flush runs
//    outside every iteration and is never counted.
//  - Timer::cuda_events: one event pair around each call (includes the launch latency the GPU
//    sees). Used with use_cupti=false, or when CUPTI cannot start (a warning says why).
//  - Timer::cuda_graph: events around replays of a graph of `calls_per_graph` captured calls;
//    per-call time = replay time / calls. (With CUPTI on, graph replays are timed by CUPTI and the
//    timer is cupti.)
// Cold L2: before each measured iteration (a call, or a graph replay) a buffer of 2x the L2 size
// is read, outside the measured window (read, not written: the L2 is left clean, as Nsight
// Compute's cache flush leaves it, so the timed work never pays for write-backs of the flush). Inside a graph, the calls rotate over `num_copies`
// copies of the inputs (the launch callable receives the copy index) so no call starts on a copy
// that an earlier call of the same replay left warm; cold_l2_copies() says how many to make.
//
// Risky parts, on purpose documented: the callable must be capturable into a CUDA graph when
// use_cuda_graph is on (no host synchronisation, no allocation, no host-side reads of results);
// time_gpu falls back to direct launches with a warning if capture fails. CUPTI is a process-wide
// resource: only one time_gpu call may run at a time, and a profiler attached to the process
// (ncu, nsys) makes CUPTI unavailable, which selects CUDA events with a warning.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kbench/gpu_monitor.hpp"
#include "kbench/statistics.hpp"

namespace kbench {

enum class Timer { cupti, cuda_events, cuda_graph };

[[nodiscard]] constexpr std::string_view timer_name(Timer t) {
  switch (t) {
    case Timer::cupti: return "cupti";
    case Timer::cuda_events: return "cuda_events";
    case Timer::cuda_graph: return "cuda_graph";
  }
  return "?";
}

struct TimingOptions {
  int dry_run_iters = 5;      // warm-up calls (plus one graph replay in graph mode), never measured
  int num_iters = 30;         // measured iterations: calls, or graph replays in graph mode
  bool use_cupti = true;      // CUPTI activity timing; false selects CUDA events
  bool use_cuda_graph = true; // capture calls_per_graph calls into a graph and time its replays
  int calls_per_graph = 10;
  bool cold_l2 = true;        // flush L2 before every measured iteration
  int num_copies = 1;         // input copies the callable can rotate over (see cold_l2_copies)
  // Noise-aware stopping (NVBench's criteria): with max_noise > 0, batches of num_iters iterations
  // are measured until the median's noise (Statistics::noise) is at most max_noise and at least
  // min_time_s of GPU time was measured, or until timeout_s of wall time has passed.
  double max_noise = 0;       // a fraction (0.005 = 0.5 %); 0: num_iters iterations, once
  double min_time_s = 0.5;
  double timeout_s = 15;
  bool monitor_gpu = true;    // sample clocks, power and clock-limit reasons while measuring
};

// One call of the work under test on `stream`, reading input copy `copy` (0 <= copy < num_copies).
using LaunchFn = std::function<void(cudaStream_t stream, int copy)>;

struct TimingResult {
  Timer timer = Timer::cupti;         // what really timed it
  int calls_per_graph = 0;            // 0 when calls were launched directly
  std::vector<double> samples_ms;     // one per measured iteration, per call
  Statistics stats;                   // of samples_ms
  bool noise_reached = true;          // false: max_noise was asked for and timeout_s came first
  GpuConditions conditions;           // clocks, power and clock limits over the measured iterations
  std::vector<std::string> warnings;  // each fallback, with its reason
};

// Runs warm-up and measured iterations of `launch` and returns per-call times. Throws
// kbench::CudaError on a CUDA failure and std::runtime_error when CUPTI records no activity for an
// iteration (nothing was launched, or the work ran on another device).
[[nodiscard]] TimingResult time_gpu(const LaunchFn& launch, const TimingOptions& options);

// The number of input copies a graph of `calls_per_graph` calls should rotate over so that each
// call starts cold when every call touches `working_set_bytes`: enough copies that the others
// sweep 2x the L2 between two uses of one copy, never more than the calls in a graph (the L2 is
// flushed before every replay, so distinct copies within one replay are cold anyway), and 1 when
// one call alone sweeps 2x the L2.
[[nodiscard]] int cold_l2_copies(std::size_t working_set_bytes, int calls_per_graph, std::size_t l2_bytes);

}  // namespace kbench
