// The MoE family's own backend, `cuda` (alias `trtllm`, the reference's one backend of these
// routines): kbench's pipeline for Hopper: routing -> permutation index -> gather with the FP8
// 1x128 quantization -> FC1 on the grouped FP8 GEMM over the local experts -> gated activation with
// the FP8 re-quantization -> FC2 on the grouped GEMM -> weighted top-k combine.
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_moe_cuda_backend();

}  // namespace kbench
