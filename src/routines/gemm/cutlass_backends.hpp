// The GEMM family's `cutlass` backend: CUTLASS 3.x sm90 kernels (src/backends/cutlass) on
// gemm_fp8_nt_groupwise and group_gemm_fp8_nt_groupwise (the blockwise-scaled FP8 GEMM, the grouped
// one in one launch), bmm_fp8 and mm_fp8 (per-tensor FP8, e4m3), mm_bf16 and bmm_bf16 (bf16 out, no
// bias). Its code is compiled only in builds for sm_90a; elsewhere the backend is absent with that
// one reason.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "routines/gemm/gemm_case.hpp"

namespace kbench {

class CutlassGemmBackend final : public BackendFor<GemmCase> {
 public:
  explicit CutlassGemmBackend(BackendInfo info) : BackendFor(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const GemmCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(GemmCase& problem, cudaStream_t stream) const override;
};

}  // namespace kbench
