// Row kernels for bfloat16 inputs (logits, scores, top_k_renorm's probabilities).
#include "kernels/sampling/row_kernels.cuh"

namespace kbench::kernels::sampling_detail {

RowKernels row_kernels_bf16() { return {sampler_kernel<__nv_bfloat16>, filter_kernel<__nv_bfloat16>, top_k_kernel<__nv_bfloat16>, top_k_estimate_kernel<__nv_bfloat16>, top_k_filter_kernel<__nv_bfloat16>, top_k_merge_kernel<__nv_bfloat16>, sampler_merge_kernel<__nv_bfloat16>}; }

}  // namespace kbench::kernels::sampling_detail
