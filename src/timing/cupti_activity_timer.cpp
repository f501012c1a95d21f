#include "cupti_activity_timer.hpp"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

#include "kbench/cuda_check.hpp"

namespace kbench::detail {
namespace {

constexpr CUpti_ExternalCorrelationKind kIterationCorrelation = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

// The device work that is timed, plus the runtime/driver API records: CUPTI only emits external
// correlation records for API records, so those kinds must be on for the attribution to work.
constexpr std::array kActivityKinds{
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};

constexpr std::size_t kActivityBufferBytes = std::size_t{8} << 20;
constexpr std::align_val_t kActivityBufferAlignment{ACTIVITY_RECORD_ALIGNMENT};

struct DeviceActivity {
  std::uint32_t correlation_id;
  std::uint32_t device_id;
  std::uint64_t start_ns;
  std::uint64_t end_ns;
};

// What the buffer-completed callback has delivered since the last take_activity_log().
struct ActivityLog {
  std::unordered_map<std::uint32_t, std::uint64_t> external_id_by_correlation;
  std::vector<DeviceActivity> device_activities;
};

// Written by CUPTI's worker thread (or inside cuptiActivityFlushAll), read by the timing thread.
struct SharedActivityLog {
  std::mutex mutex;
  ActivityLog log;
};

SharedActivityLog& shared_activity_log() {
  static SharedActivityLog shared;
  return shared;
}

ActivityLog take_activity_log() {
  SharedActivityLog& shared = shared_activity_log();
  const std::lock_guard lock(shared.mutex);
  return std::exchange(shared.log, {});
}

template <class Record>
DeviceActivity device_activity(const CUpti_Activity* record) {
  const auto* typed = reinterpret_cast<const Record*>(record);
  return {typed->correlationId, typed->deviceId, typed->start, typed->end};
}

// CUPTI callbacks are C entry points: nothing may propagate out of them.
void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_num_records) noexcept {
  *buffer = static_cast<std::uint8_t*>(::operator new(kActivityBufferBytes, kActivityBufferAlignment, std::nothrow));
  *size = *buffer != nullptr ? kActivityBufferBytes : 0;
  *max_num_records = 0;  // as many as fit
}

void CUPTIAPI on_buffer_completed(CUcontext /*context*/, std::uint32_t /*stream_id*/, std::uint8_t* buffer,
                                  std::size_t /*size*/, std::size_t valid_size) noexcept {
  ActivityLog parsed;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    DeviceActivity activity{};
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: activity = device_activity<CUpti_ActivityKernel10>(record); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: activity = device_activity<CUpti_ActivityMemcpy6>(record); break;
      case CUPTI_ACTIVITY_KIND_MEMSET: activity = device_activity<CUpti_ActivityMemset4>(record); break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* correlation = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (correlation->externalKind == kIterationCorrelation) {
          parsed.external_id_by_correlation.emplace(correlation->correlationId, correlation->externalId);
        }
        continue;
      }
      default: continue;  // runtime/driver API records: enabled only so that the correlations exist
    }
    // CUPTI marks a record it could not time with zero timestamps; it would corrupt the span.
    if (activity.start_ns != 0 && activity.end_ns != 0) parsed.device_activities.push_back(activity);
  }
  ::operator delete(buffer, kActivityBufferAlignment);

  SharedActivityLog& shared = shared_activity_log();
  const std::lock_guard lock(shared.mutex);
  shared.log.external_id_by_correlation.merge(parsed.external_id_by_correlation);
  shared.log.device_activities.insert(shared.log.device_activities.end(), parsed.device_activities.begin(),
                                      parsed.device_activities.end());
}

[[nodiscard]] std::string cupti_error_text(CUptiResult status) {
  const char* text = nullptr;
  if (cuptiGetResultString(status, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(status));
  }
  return text;
}

void check_cupti(CUptiResult status, const char* call) {
  if (status != CUPTI_SUCCESS) throw std::runtime_error(std::string(call) + " failed: " + cupti_error_text(status));
}

void start_or_throw(CUptiResult status) {
  if (status != CUPTI_SUCCESS) throw CuptiUnavailable(cupti_error_text(status));
}

void disable_activity_kinds() noexcept {
  for (const CUpti_ActivityKind kind : kActivityKinds) (void)cuptiActivityDisable(kind);
}

std::mutex& session_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Called with session_mutex() held.
std::uint32_t next_session_id() {
  static std::uint32_t last_session = 0;
  return ++last_session;
}

}  // namespace

CuptiActivityTimer::CuptiActivityTimer(int device)
    : exclusive_(session_mutex()), device_(static_cast<std::uint32_t>(device)), session_(next_session_id()) {
  start_or_throw(cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed));
  // Whatever an earlier session left in CUPTI's buffers is delivered now and dropped with the log.
  start_or_throw(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  (void)take_activity_log();
  for (const CUpti_ActivityKind kind : kActivityKinds) {
    if (const CUptiResult status = cuptiActivityEnable(kind); status != CUPTI_SUCCESS) {
      disable_activity_kinds();
      throw CuptiUnavailable(cupti_error_text(status));
    }
  }
}

CuptiActivityTimer::~CuptiActivityTimer() {
  if (correlation_pushed_) (void)cuptiActivityPopExternalCorrelationId(kIterationCorrelation, nullptr);
  disable_activity_kinds();
}

std::uint64_t CuptiActivityTimer::external_id(int iteration) const {
  return (std::uint64_t{session_} << 32) | static_cast<std::uint32_t>(iteration);
}

void CuptiActivityTimer::begin(int iteration) {
  check_cupti(cuptiActivityPushExternalCorrelationId(kIterationCorrelation, external_id(iteration)),
              "cuptiActivityPushExternalCorrelationId");
  correlation_pushed_ = true;
  iterations_ = std::max(iterations_, iteration + 1);
}

void CuptiActivityTimer::end(int iteration) {
  std::uint64_t popped = 0;
  check_cupti(cuptiActivityPopExternalCorrelationId(kIterationCorrelation, &popped),
              "cuptiActivityPopExternalCorrelationId");
  // A callable that pushes its own CUSTOM0 id without popping it would misattribute every record
  // (ours is then still pushed, and the destructor pops it).
  if (popped != external_id(iteration)) {
    throw std::runtime_error("the launch callable left a CUPTI CUSTOM0 external correlation id pushed");
  }
  correlation_pushed_ = false;
}

std::vector<double> CuptiActivityTimer::per_iteration_ms() {
  KBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  const ActivityLog log = take_activity_log();

  constexpr std::uint64_t kNoStart = std::numeric_limits<std::uint64_t>::max();
  const auto count = static_cast<std::size_t>(iterations_);
  std::vector<std::uint64_t> first_start(count, kNoStart);
  std::vector<std::uint64_t> last_end(count, 0);
  for (const DeviceActivity& activity : log.device_activities) {
    const auto found = log.external_id_by_correlation.find(activity.correlation_id);
    // Records launched outside every iteration (warm-up, L2 flush) have no external id.
    if (found == log.external_id_by_correlation.end() || activity.device_id != device_) continue;
    if (found->second >> 32 != session_) continue;
    const auto iteration = static_cast<std::size_t>(found->second & 0xffffffffu);
    if (iteration >= count) continue;
    first_start[iteration] = std::min(first_start[iteration], activity.start_ns);
    last_end[iteration] = std::max(last_end[iteration], activity.end_ns);
  }

  std::vector<double> milliseconds(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (first_start[i] == kNoStart) {
      throw std::runtime_error("CUPTI recorded no GPU activity for measured iteration " + std::to_string(i) +
                               " of " + std::to_string(count) +
                               ": the launch callable launched no kernel, memcpy or memset on device " +
                               std::to_string(device_));
    }
    milliseconds[i] = static_cast<double>(last_end[i] - first_start[i]) * 1e-6;
  }
  return milliseconds;
}

}  // namespace kbench::detail
