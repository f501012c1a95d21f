// The fp8_per_tensor configuration: e4m3 A and B, D = (a_scale * b_scale) * acc with both scales read
// from device memory by the epilogue (an epilogue visitor tree: the product of two broadcast scalars
// times the accumulator), 128 x 128 x 128 tiles, 1 x 2 clusters, bf16 or fp16 out. The mainloop
// accumulates in the tensor cores' fast FP8 mode (no promotion to fp32 registers every few k-steps),
// as torch._scaled_mm's use_fast_accum and cuBLASLt's fast-accumulation mode do.
#include "backends/cutlass/cutlass_gemm_kernel.cuh"
#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"

namespace kbench::backends::cutlass_kernels {
namespace {

using cute::_1;
using cute::_128;
using cute::_2;
namespace fusion = cutlass::epilogue::fusion;

// a_scale * b_scale: one scalar for every batch (batch stride 0).
using ScaleProduct = fusion::Sm90ScalarBroadcast<float, cute::Stride<cute::_0, cute::_0, int64_t>, 2>;
template <class ElementD>
using ScaledAccumulator =
    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::multiplies, ElementD, float, cutlass::FloatRoundStyle::round_to_nearest>,
                    ScaleProduct, fusion::Sm90AccFetch>;

template <class ElementD>
using PerTensorGemm = Sm90Gemm<cutlass::float_e4m3_t, cutlass::layout::RowMajor, cutlass::layout::ColumnMajor, ElementD,
                               cute::Shape<_128, _128, _128>, cute::Shape<_1, _2, _1>,
                               cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum, ScaledAccumulator<ElementD>>;

template <class ElementD>
PlannedKernel plan(const CutlassGemmShape& s, std::span<const CutlassGemmOperands> input_sets, cudaStream_t stream) {
  using Gemm = PerTensorGemm<ElementD>;
  return plan_input_sets<Gemm>(input_sets, stream, [&](const CutlassGemmOperands& o, const auto& hardware) {
    // The visitor tree's arguments, children first: the two scalars (read through the pointers, the
    // constants unused), the accumulator, the product.
    const typename Gemm::FusionArguments scaled{{{1.0f, 1.0f}, {o.a_scale, o.b_scale}, {}}, {}, {}};
    return Gemm::arguments(s, o, hardware, scaled);
  });
}

}  // namespace

PlannedKernel plan_fp8_per_tensor(const CutlassGemmShape& shape, std::span<const CutlassGemmOperands> input_sets,
                                  cudaStream_t stream) {
  return shape.out_dtype == DType::float16 ? plan<cutlass::half_t>(shape, input_sets, stream)
                                           : plan<cutlass::bfloat16_t>(shape, input_sets, stream);
}

}  // namespace kbench::backends::cutlass_kernels
