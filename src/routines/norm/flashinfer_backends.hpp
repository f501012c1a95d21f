// The norm family's `flashinfer` backend: FlashInfer's own RMSNorm kernels (flashinfer/norm.cuh,
// from the flashinfer-python wheel), the reference tool's kernels, as a yardstick. Its code is
// compiled only in builds with FlashInfer (KBENCH_WITH_FLASHINFER=ON); elsewhere the backend is
// absent with that one reason.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "routines/norm/norm_case.hpp"

namespace kbench {

class FlashinferNormBackend final : public BackendFor<NormCase> {
 public:
  explicit FlashinferNormBackend(BackendInfo info) : BackendFor(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const NormCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(NormCase& problem, cudaStream_t stream) const override;
};

}  // namespace kbench
