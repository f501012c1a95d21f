#include "kbench/gpu_monitor.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>

namespace kbench {
namespace {

// The few NVML entry points used, declared from NVML's stable C ABI and looked up at run time, so
// kbench neither needs nvml.h to build nor libnvidia-ml to start.
using NvmlReturn = int;  // NVML_SUCCESS = 0
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMemory = 2;
constexpr int kNvmlTemperatureGpu = 0;

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*max_clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*power_mw)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*power_limit_mw)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*clock_reasons)(NvmlDevice, unsigned long long*) = nullptr;
  std::string why_not;
};

template <class Fn>
bool bind(void* library, Fn& fn, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = dlsym(library, name)) {
      fn = reinterpret_cast<Fn>(symbol);
      return true;
    }
  }
  return false;
}

// Opened once per process and never closed (NVML's own advice for long-lived users).
const Nvml& nvml() {
  static const Nvml loaded = [] {
    Nvml n;
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      n.why_not = "NVML (libnvidia-ml.so.1) is not present";
      return n;
    }
    const bool bound = bind(library, n.init, {"nvmlInit_v2", "nvmlInit"}) &&
                       bind(library, n.handle_by_pci_bus_id, {"nvmlDeviceGetHandleByPciBusId_v2"}) &&
                       bind(library, n.clock, {"nvmlDeviceGetClockInfo"}) &&
                       bind(library, n.max_clock, {"nvmlDeviceGetMaxClockInfo"}) &&
                       bind(library, n.power_mw, {"nvmlDeviceGetPowerUsage"}) &&
                       bind(library, n.power_limit_mw, {"nvmlDeviceGetEnforcedPowerLimit"}) &&
                       bind(library, n.temperature, {"nvmlDeviceGetTemperature"}) &&
                       bind(library, n.clock_reasons,
                            {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
    if (!bound) {
      n = Nvml{};
      n.why_not = "NVML lacks an entry point kbench uses";
    } else if (const NvmlReturn status = n.init(); status != 0) {
      n = Nvml{};
      n.why_not = "nvmlInit failed (NVML error " + std::to_string(status) + ")";
    }
    return n;
  }();
  return loaded;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

std::string clock_limit_names(std::uint64_t reasons) {
  static constexpr std::pair<std::uint64_t, const char*> kNames[] = {
      {kClockLimitIdle, "gpu_idle"},
      {kClockLimitApplicationSetting, "applications_clocks_setting"},
      {kClockLimitPowerCap, "sw_power_cap"},
      {kClockLimitHwSlowdown, "hw_slowdown"},
      {kClockLimitSyncBoost, "sync_boost"},
      {kClockLimitSwThermal, "sw_thermal_slowdown"},
      {kClockLimitHwThermal, "hw_thermal_slowdown"},
      {kClockLimitHwPowerBrake, "hw_power_brake_slowdown"},
      {kClockLimitDisplaySetting, "display_clock_setting"},
  };
  std::string names;
  for (const auto& [bit, name] : kNames) {
    if ((reasons & bit) == 0) continue;
    if (!names.empty()) names += '|';
    names += name;
  }
  return names.empty() ? "none" : names;
}

GpuConditions summarize_conditions(const std::vector<GpuSample>& samples) {
  GpuConditions c;
  c.available = !samples.empty();
  if (samples.empty()) {
    c.why_not = "no sample was taken";
    return c;
  }
  c.samples = static_cast<int>(samples.size());
  std::vector<double> sm, memory, power;
  c.sm_clock_min_mhz = samples.front().sm_clock_mhz;
  for (const GpuSample& s : samples) {
    sm.push_back(s.sm_clock_mhz);
    memory.push_back(s.memory_clock_mhz);
    power.push_back(s.power_w);
    c.sm_clock_min_mhz = std::min(c.sm_clock_min_mhz, s.sm_clock_mhz);
    c.power_max_w = std::max(c.power_max_w, s.power_w);
    c.temperature_c = std::max(c.temperature_c, s.temperature_c);
    c.clock_limits |= s.clock_limits;
  }
  c.sm_clock_mhz = median_of(sm);
  c.memory_clock_mhz = median_of(memory);
  c.power_w = median_of(power);
  return c;
}

struct GpuMonitor::Device {
  NvmlDevice handle = nullptr;
  double sm_clock_max_mhz = 0;
  double power_limit_w = 0;

  [[nodiscard]] GpuSample sample() const {
    const Nvml& n = nvml();
    unsigned sm = 0, memory = 0, milliwatts = 0, celsius = 0;
    unsigned long long reasons = 0;
    (void)n.clock(handle, kNvmlClockSm, &sm);
    (void)n.clock(handle, kNvmlClockMemory, &memory);
    (void)n.power_mw(handle, &milliwatts);
    (void)n.temperature(handle, kNvmlTemperatureGpu, &celsius);
    (void)n.clock_reasons(handle, &reasons);
    return {static_cast<double>(sm), static_cast<double>(memory), milliwatts * 1e-3, static_cast<double>(celsius),
            static_cast<std::uint64_t>(reasons)};
  }
};

GpuMonitor::GpuMonitor(int cuda_device, std::chrono::microseconds period) : period_(period) {
  const Nvml& n = nvml();
  if (!n.why_not.empty()) {
    summary_.why_not = n.why_not;
    return;
  }
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device) != cudaSuccess) {
    (void)cudaGetLastError();
    summary_.why_not = "CUDA gave no PCI bus id for device " + std::to_string(cuda_device);
    return;
  }
  auto device = std::make_unique<Device>();
  if (n.handle_by_pci_bus_id(bus_id, &device->handle) != 0) {
    summary_.why_not = std::string("NVML does not know the GPU at ") + bus_id;
    return;
  }
  unsigned max_sm = 0, limit_mw = 0;
  (void)n.max_clock(device->handle, kNvmlClockSm, &max_sm);
  (void)n.power_limit_mw(device->handle, &limit_mw);
  device->sm_clock_max_mhz = max_sm;
  device->power_limit_w = limit_mw * 1e-3;
  device_ = std::move(device);
  samples_.push_back(device_->sample());
  sampler_ = std::thread([this] {
    while (!stopping_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(period_);
      samples_.push_back(device_->sample());
    }
  });
}

GpuMonitor::~GpuMonitor() { (void)stop(); }

GpuConditions GpuMonitor::stop() {
  if (stopped_ || !device_) return summary_;
  stopped_ = true;
  stopping_ = true;
  sampler_.join();
  samples_.push_back(device_->sample());
  summary_ = summarize_conditions(samples_);
  summary_.sm_clock_max_mhz = device_->sm_clock_max_mhz;
  summary_.power_limit_w = device_->power_limit_w;
  return summary_;
}

}  // namespace kbench
