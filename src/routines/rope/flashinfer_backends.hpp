// The RoPE family's `flashinfer` backend for the FP8 routines: FlashInfer's own kernels
// (flashinfer/pos_enc.cuh RopeQuantize / RopeQuantizeAppendPagedKVCache, from the flashinfer-python
// wheel), the reference tool's kernels, as a yardstick. Compiled only in builds with FlashInfer
// (KBENCH_WITH_FLASHINFER=ON); elsewhere the backend is absent with that one reason. The five float
// routines have no flashinfer backend yet.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "routines/rope/rope_quantize_case.hpp"

namespace kbench {

class FlashinferRopeQuantizeBackend final : public BackendFor<RopeQuantizeCase> {
 public:
  explicit FlashinferRopeQuantizeBackend(BackendInfo info) : BackendFor(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const RopeQuantizeCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(RopeQuantizeCase& problem, cudaStream_t stream) const override;
};

}  // namespace kbench
