// The GEMM family's `cublas` backend (`cublaslt` for mm_bf16, the reference's name there):
// cuBLASLt's matmul (src/backends/cublas) on bmm_fp8 and mm_fp8 (per-tensor FP8), mm_bf16 and
// bmm_bf16 (BF16), and gemm_fp8_nt_groupwise (cuBLAS 12.9's block-scaled FP8, Hopper). Its code is
// compiled only in builds with cuBLASLt; elsewhere the backend is absent with that one reason.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "routines/gemm/gemm_case.hpp"

namespace kbench {

class CublasGemmBackend final : public BackendFor<GemmCase> {
 public:
  explicit CublasGemmBackend(BackendInfo info) : BackendFor(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const GemmCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(GemmCase& problem, cudaStream_t stream) const override;
};

}  // namespace kbench
