// The sort-based baseline for float16 rows (one CUB instantiation per translation unit).
#include "kernels/sampling/sort_baseline_instance.cuh"

namespace kbench::kernels::sampling_detail {

SortKernels sort_kernels_f16() { return SortBaseline<__half>::kernels(); }

}  // namespace kbench::kernels::sampling_detail
