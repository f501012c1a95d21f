// CUPTI activity timing for time_gpu (private to kbench_timing). Each measured iteration runs inside
// an external-correlation scope; afterwards, every kernel/memcpy/memset record whose launching API
// call carried that scope's id belongs to the iteration, and the iteration's time is the span from
// the first start to the last end of those records.
#pragma once

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace kbench::detail {

// CUPTI refused to start (another profiler holds it, or it is not usable here); what() is CUPTI's
// own error text. time_gpu falls back to CUDA events.
class CuptiUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One collection session. CUPTI's activity state is process-wide, so sessions are serialised: a
// second one waits until the first is destroyed.
class CuptiActivityTimer {
 public:
  // Enables activity collection on behalf of `device` (the current device). Throws CuptiUnavailable.
  explicit CuptiActivityTimer(int device);
  ~CuptiActivityTimer();
  CuptiActivityTimer(const CuptiActivityTimer&) = delete;
  CuptiActivityTimer& operator=(const CuptiActivityTimer&) = delete;

  // Work launched by this thread between begin(i) and end(i) is attributed to iteration i.
  void begin(int iteration);
  void end(int iteration);

  // Waits for the device, drains CUPTI and returns each begun iteration's span in milliseconds.
  // Throws std::runtime_error when an iteration has no device activity.
  [[nodiscard]] std::vector<double> per_iteration_ms();

 private:
  [[nodiscard]] std::uint64_t external_id(int iteration) const;

  std::unique_lock<std::mutex> exclusive_;
  std::uint32_t device_;
  std::uint32_t session_;  // tags this session's external ids so no other session's records count
  int iterations_ = 0;
  bool correlation_pushed_ = false;
};

}  // namespace kbench::detail
