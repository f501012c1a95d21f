// What the harness needs to know about the GPU present.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace kbench {

struct DeviceInfo {
  int index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t total_memory = 0;

  [[nodiscard]] std::string compute_capability() const {
    return std::to_string(cc_major) + "." + std::to_string(cc_minor);
  }
  // The reference's gpu_name: spaces replaced by underscores.
  [[nodiscard]] std::string gpu_name() const;
};

// The current CUDA device, or nullopt with the reason in *why (no driver, no device, ...).
[[nodiscard]] std::optional<DeviceInfo> query_device(std::string* why);

// Free device memory now, in bytes.
[[nodiscard]] std::size_t free_device_memory();

}  // namespace kbench
