// The MoE family's `cutlass` backend: the layer a user would assemble from a library, CUTLASS 3.x's
// sm90 grouped FP8 blockwise GEMM (src/backends/cutlass/cutlass_moe_gemm.hpp, group sizes read on
// the device) for FC1 and FC2, kbench's routing, permutation, activation and combine around it
// (moe_pipeline.hpp). The DeepSeek FP8 block-scale layer only; compiled only where CUTLASS is built.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "routines/moe/moe_case.hpp"

namespace kbench {

class MoeCutlassBackend final : public BackendFor<MoeCase> {
 public:
  explicit MoeCutlassBackend(BackendInfo info) : BackendFor(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const MoeCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(MoeCase& problem, cudaStream_t stream) const override;
};

}  // namespace kbench
