// One instantiation of kbench's FP8 GEMM kernel (fp8_gemm_kernel.cuh): GroupwiseTile128x192.
#include "kernels/gemm/sm90/fp8_gemm_kernel.cuh"

namespace kbench::kernels::gemm::sm90 {

template cudaError_t launch_fp8_gemm<GroupwiseTile128x192>(const Fp8GemmArgs&, int, cudaStream_t, bool);

}  // namespace kbench::kernels::gemm::sm90
