// Row kernels for float16 inputs (logits, scores, top_k_renorm's probabilities).
#include "kernels/sampling/row_kernels.cuh"

namespace kbench::kernels::sampling_detail {

RowKernels row_kernels_f16() { return {sampler_kernel<__half>, filter_kernel<__half>, top_k_kernel<__half>, top_k_estimate_kernel<__half>, top_k_filter_kernel<__half>, top_k_merge_kernel<__half>, sampler_merge_kernel<__half>}; }

}  // namespace kbench::kernels::sampling_detail
