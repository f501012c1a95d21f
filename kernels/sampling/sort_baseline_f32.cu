// The sort-based baseline for float32 rows (one CUB instantiation per translation unit).
#include "kernels/sampling/sort_baseline_instance.cuh"

namespace kbench::kernels::sampling_detail {

SortKernels sort_kernels_f32() { return SortBaseline<float>::kernels(); }

}  // namespace kbench::kernels::sampling_detail
