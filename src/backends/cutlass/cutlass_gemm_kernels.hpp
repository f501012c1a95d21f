// The planners of the CUTLASS GEMM configurations, one per translation unit (each defines one), for
// cutlass_gemm.cpp to choose from by kind; free of CUTLASS's headers like cutlass_gemm.hpp.
#pragma once

#include <memory>
#include <span>

#include "backends/cutlass/cutlass_gemm.hpp"

namespace kbench::backends::cutlass_kernels {

using PlannedKernel = std::unique_ptr<CutlassGemm::Kernel>;

// fp8_blockwise_gemm.cu: 128 x 128 x 128 tiles, 1 x 2 clusters, bf16 or fp16 out.
[[nodiscard]] PlannedKernel plan_fp8_blockwise(const CutlassGemmShape& shape,
                                               std::span<const CutlassGemmOperands> input_sets, cudaStream_t stream);
// fp8_blockwise_grouped_gemm.cu: fp8_blockwise's tiles, clusters and outputs, every group in one launch.
[[nodiscard]] PlannedKernel plan_fp8_blockwise_grouped(const CutlassGemmShape& shape,
                                                       std::span<const CutlassGemmOperands> input_sets,
                                                       cudaStream_t stream);
// fp8_per_tensor_gemm.cu: 128 x 128 x 128 tiles, 1 x 2 clusters, bf16 or fp16 out.
[[nodiscard]] PlannedKernel plan_fp8_per_tensor(const CutlassGemmShape& shape,
                                                std::span<const CutlassGemmOperands> input_sets, cudaStream_t stream);
// bf16_gemm.cu: 128 x 256 x 64 tiles, 2 x 1 clusters, bf16 out.
[[nodiscard]] PlannedKernel plan_bf16(const CutlassGemmShape& shape, std::span<const CutlassGemmOperands> input_sets,
                                      cudaStream_t stream);

}  // namespace kbench::backends::cutlass_kernels
