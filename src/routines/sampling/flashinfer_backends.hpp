// The sampling family's `flashinfer` backend: FlashInfer's own sampling and top-k kernels
// (backends/flashinfer/flashinfer_sampling.hpp), the reference tool's, as a yardstick. Compiled only
// in builds with FlashInfer (KBENCH_WITH_FLASHINFER=ON); elsewhere absent with that one reason.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "routines/sampling/sampling_case.hpp"

namespace kbench {

class FlashinferSamplingBackend final : public BackendFor<SamplingCase> {
 public:
  explicit FlashinferSamplingBackend(BackendInfo info) : BackendFor(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const SamplingCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(SamplingCase& problem, cudaStream_t stream) const override;
};

}  // namespace kbench
