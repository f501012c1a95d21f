// One instantiation of kbench's swapped FP4 GEMM kernel (fp4_swapped_kernel.cuh): float16 operands, 64 rows of A a unit.
#include "kernels/gemm/sm90/fp4_swapped_kernel.cuh"

namespace kbench::kernels::gemm::sm90 {

template cudaError_t launch_fp4_swapped<DType::float16, 64>(const WgmmaGemmArgs&, int, cudaStream_t, bool);

}  // namespace kbench::kernels::gemm::sm90
