// The sort-based baseline for bfloat16 rows (one CUB instantiation per translation unit).
#include "kernels/sampling/sort_baseline_instance.cuh"

namespace kbench::kernels::sampling_detail {

SortKernels sort_kernels_bf16() { return SortBaseline<__nv_bfloat16>::kernels(); }

}  // namespace kbench::kernels::sampling_detail
