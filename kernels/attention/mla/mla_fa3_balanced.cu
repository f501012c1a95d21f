// fa3's balanced variant (a balanced schedule's segments a CTA): its translation unit.
#include "kernels/attention/mla/mla_fa3_kernel.cuh"

namespace kbench::kernels::mla_fa3_detail {

template cudaError_t launch_mla_fa3_grid<true>(const Args&, dim3, cudaStream_t);
template cudaError_t mla_fa3_kernel_attributes<true>(cudaFuncAttributes*);

}  // namespace kbench::kernels::mla_fa3_detail
