// The bf16 configuration: bf16 A and B, D = acc in bf16, 128 x 256 x 64 tiles (two consumer warpgroups
// of 64 x 256 each, the widest tile their registers hold) and 2 x 1 clusters (the B tile multicast),
// the shape CUTLASS's profiler favours for large bf16 GEMMs on the H100.
#include "backends/cutlass/cutlass_gemm_kernel.cuh"

namespace kbench::backends::cutlass_kernels {
namespace {

using cute::_1;
using cute::_2;

using Bf16Gemm = Sm90Gemm<cutlass::bfloat16_t, cutlass::layout::RowMajor, cutlass::layout::ColumnMajor,
                          cutlass::bfloat16_t, cute::Shape<cute::_128, cute::_256, cute::_64>, cute::Shape<_2, _1, _1>,
                          cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                          cutlass::epilogue::fusion::LinearCombination<cutlass::bfloat16_t, float, void>>;

}  // namespace

PlannedKernel plan_bf16(const CutlassGemmShape& s, std::span<const CutlassGemmOperands> input_sets,
                        cudaStream_t stream) {
  return plan_input_sets<Bf16Gemm>(input_sets, stream, [&](const CutlassGemmOperands& o, const auto& hardware) {
    return Bf16Gemm::arguments(s, o, hardware, {});
  });
}

}  // namespace kbench::backends::cutlass_kernels
