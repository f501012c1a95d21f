// The GEMM family's own backend, `cuda`: kbench's FP8 GEMM kernel for Hopper
// (kernels/gemm/sm90/wgmma_gemm.hpp) on gemm_fp8_nt_groupwise and group_gemm_fp8_nt_groupwise (block
// scales promoted every 128 of k), bmm_fp8 and mm_fp8 (per-tensor scales), e4m3 operands.
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_kbench_gemm_backend();

}  // namespace kbench
