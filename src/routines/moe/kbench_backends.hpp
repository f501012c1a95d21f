// The MoE family's own backend, `cuda` (aliased to the reference's one backend label of the routine:
// `trtllm` or `cutlass`): kbench's pipeline for Hopper: routing -> permutation index -> gather in
// FC1's format (the activation's FP8 quantization fused) -> FC1 on kbench's grouped GEMM over the
// local experts -> gated activation with the intermediate's re-quantization -> FC2 on the grouped
// GEMM -> weighted top-k combine.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/backend.hpp"
#include "routines/moe/moe_pipeline.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_moe_cuda_backend(const std::string& reference_label);

// The `cuda` backend's grouped GEMMs for a MoePipeline (also the MoE all-to-all's expert stage), and
// why they can't run a problem (nullopt: they can).
[[nodiscard]] ExpertGemmPlanner kbench_expert_gemms();
[[nodiscard]] std::optional<std::string> kbench_expert_gemms_unsupported(const MoeProblem& p);

}  // namespace kbench
