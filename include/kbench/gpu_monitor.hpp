// The GPU's clocks, power, temperature and clock-limit reasons, sampled while work is measured:
// under a power cap the sustained SM clock decides a compute-bound time as much as the kernel does,
// so every result carries the conditions it was measured under.
//
//   kbench::GpuMonitor monitor(device);        // starts sampling on a thread of its own
//   ... measured work ...
//   kbench::GpuConditions c = monitor.stop();  // medians and extremes over the samples
//
// NVML is opened at run time (libnvidia-ml.so.1, part of the driver): a machine without it (CI,
// a container without the driver's NVML) gives GpuConditions{.available = false, .why_not = ...}.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace kbench {

// NVML's clock event (throttle) reasons, as bits.
enum ClockLimit : std::uint64_t {
  kClockLimitIdle = 0x1,
  kClockLimitApplicationSetting = 0x2,
  kClockLimitPowerCap = 0x4,        // the software power cap (the board's power limit)
  kClockLimitHwSlowdown = 0x8,      // hardware slowdown (power brake or thermal)
  kClockLimitSyncBoost = 0x10,
  kClockLimitSwThermal = 0x20,
  kClockLimitHwThermal = 0x40,
  kClockLimitHwPowerBrake = 0x80,
  kClockLimitDisplaySetting = 0x100,
};
// "sw_power_cap|hw_slowdown", or "none".
[[nodiscard]] std::string clock_limit_names(std::uint64_t reasons);
// The reasons that mean the GPU held its clock below what the work asked for (caps and slowdowns).
inline constexpr std::uint64_t kClockLimitsThatSlow = kClockLimitPowerCap | kClockLimitHwSlowdown |
                                                      kClockLimitSwThermal | kClockLimitHwThermal |
                                                      kClockLimitHwPowerBrake;

struct GpuSample {
  double sm_clock_mhz = 0;
  double memory_clock_mhz = 0;
  double power_w = 0;
  double temperature_c = 0;
  std::uint64_t clock_limits = 0;
};

struct GpuConditions {
  bool available = false;
  std::string why_not;  // when !available
  int samples = 0;
  double sm_clock_mhz = 0;       // median over the samples
  double sm_clock_min_mhz = 0;
  double sm_clock_max_mhz = 0;   // the GPU's maximum SM clock (not a sample)
  double memory_clock_mhz = 0;   // median
  double power_w = 0;            // median
  double power_max_w = 0;
  double power_limit_w = 0;      // the enforced board limit
  double temperature_c = 0;      // maximum
  std::uint64_t clock_limits = 0;  // every reason seen in any sample
};

class GpuMonitor {
 public:
  // Samples the CUDA device `cuda_device` every `period` (and once at start and stop).
  explicit GpuMonitor(int cuda_device, std::chrono::microseconds period = std::chrono::microseconds(2000));
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;

  // Stops sampling and summarises; later calls return the same summary.
  [[nodiscard]] GpuConditions stop();

 private:
  struct Device;
  std::unique_ptr<Device> device_;
  std::chrono::microseconds period_;
  std::vector<GpuSample> samples_;
  std::atomic<bool> stopping_{false};
  std::thread sampler_;
  GpuConditions summary_;
  bool stopped_ = false;
};

// The median of the samples and the extremes, as GpuMonitor::stop() reports them (pure; tested on
// the CPU).
[[nodiscard]] GpuConditions summarize_conditions(const std::vector<GpuSample>& samples);

}  // namespace kbench
