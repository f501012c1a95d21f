// The fp8_blockwise configuration: e4m3 A and B with DeepSeek-style fp32 block scales (A one per row
// and 128 of k, B one per 128 x 128 block), CUTLASS's FP8 blockwise mainloop (each 128-deep slice of
// k accumulated by wgmma, then promoted into the fp32 accumulators times its two scales), 128 x 128 x
// 128 tiles (one scale block deep) and 1 x 2 clusters (the A tile multicast to the two CTAs of a
// cluster), bf16 or fp16 out.
#include "backends/cutlass/cutlass_gemm_kernel.cuh"

namespace kbench::backends::cutlass_kernels {
namespace {

using cute::_1;
using cute::_128;
using cute::_2;

// Scales in the MN-major layouts (BlockwiseScaleConfig): A's scale tile then arrives by TMA.
template <class ElementD>
using BlockwiseGemm =
    Sm90Gemm<cutlass::float_e4m3_t, cute::tuple<cutlass::layout::RowMajor, BlockwiseLayoutSFA>,
             cute::tuple<cutlass::layout::ColumnMajor, BlockwiseLayoutSFB>, ElementD, cute::Shape<_128, _128, _128>,
             cute::Shape<_1, _2, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8BlockScaledAccum,
             cutlass::epilogue::fusion::LinearCombination<ElementD, float, void>>;

// A's scales over m rounded up to 4 rows (cutlass_a_scale_stride): the TMA load of the scales needs
// 16-byte rows. The padding rows meet only A's rows past m, which TMA reads as zeros and whose results
// the epilogue does not store.
BlockwiseLayoutSFA a_scale_layout(const CutlassGemmShape& s) {
  return BlockwiseScaleConfig::tile_atom_to_shape_SFA(cute::make_shape(
      static_cast<int>(cutlass_a_scale_stride(s)), static_cast<int>(s.n), static_cast<int>(s.k), 1));
}

template <class ElementD>
PlannedKernel plan(const CutlassGemmShape& s, std::span<const CutlassGemmOperands> input_sets, cudaStream_t stream) {
  using Gemm = BlockwiseGemm<ElementD>;
  const BlockwiseLayoutSFA layout_sfa = a_scale_layout(s);
  const BlockwiseLayoutSFB layout_sfb = BlockwiseScaleConfig::tile_atom_to_shape_SFB(Gemm::problem(s));
  return plan_input_sets<Gemm>(input_sets, stream, [&](const CutlassGemmOperands& o, const auto& hardware) {
    return Gemm::arguments(s, o, hardware, {}, o.a_scale, layout_sfa, o.b_scale, layout_sfb);
  });
}

}  // namespace

PlannedKernel plan_fp8_blockwise(const CutlassGemmShape& shape, std::span<const CutlassGemmOperands> input_sets,
                                 cudaStream_t stream) {
  return shape.out_dtype == DType::float16 ? plan<cutlass::half_t>(shape, input_sets, stream)
                                           : plan<cutlass::bfloat16_t>(shape, input_sets, stream);
}

}  // namespace kbench::backends::cutlass_kernels
