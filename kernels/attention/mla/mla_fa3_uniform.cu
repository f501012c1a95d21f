// fa3's uniform variant (one segment a CTA: the uniform grid): its translation unit.
#include "kernels/attention/mla/mla_fa3_kernel.cuh"

namespace kbench::kernels::mla_fa3_detail {

template cudaError_t launch_mla_fa3_grid<false>(const Args&, dim3, cudaStream_t);
template cudaError_t mla_fa3_kernel_attributes<false>(cudaFuncAttributes*);

}  // namespace kbench::kernels::mla_fa3_detail
