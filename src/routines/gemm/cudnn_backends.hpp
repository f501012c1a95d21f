// The GEMM family's `cudnn` backend: cuDNN's FP8 matmul graph (src/backends/cudnn) on bmm_fp8, as
// the reference's cudnn backend. Compiled only in builds with cuDNN; elsewhere the backend is absent
// with that one reason.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "routines/gemm/gemm_case.hpp"

namespace kbench {

class CudnnGemmBackend final : public BackendFor<GemmCase> {
 public:
  explicit CudnnGemmBackend(BackendInfo info) : BackendFor(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const GemmCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(GemmCase& problem, cudaStream_t stream) const override;
};

}  // namespace kbench
