// `nccl` for moe_a2a_dispatch_combine: NCCL's grouped send/receive (nccl_backends.cpp, compiled
// where this build found NCCL; elsewhere vendor_backend() stands an AbsentBackend in its place).
#pragma once

#include "core/backend.hpp"
#include "routines/moe_comm/a2a_case.hpp"

namespace kbench {

class A2aNcclBackend final : public BackendFor<MoeA2aCase> {
 public:
  explicit A2aNcclBackend(BackendInfo info);
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const MoeA2aCase& c) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(MoeA2aCase& c, cudaStream_t stream) const override;
};

}  // namespace kbench
