// The attention family's `cudnn` backends: cuDNN's SDPA graphs (src/backends/cudnn) on the paged
// decode and prefill cases. Their code is compiled only in builds with cuDNN; elsewhere the
// backends are absent with that one reason.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "routines/attention/decode_case.hpp"
#include "routines/attention/prefill_case.hpp"

namespace kbench {

class CudnnDecodeBackend final : public BackendFor<DecodeCase> {
 public:
  explicit CudnnDecodeBackend(BackendInfo info) : BackendFor(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const DecodeCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(DecodeCase& problem, cudaStream_t stream) const override;
};

class CudnnPrefillBackend final : public BackendFor<PrefillCase> {
 public:
  explicit CudnnPrefillBackend(BackendInfo info) : BackendFor(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const PrefillCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(PrefillCase& problem, cudaStream_t stream) const override;
};

}  // namespace kbench
