// One instantiation of kbench's wgmma GEMM kernel (wgmma_gemm_kernel.cuh): WeightFp4Bf16Tile128x256.
#include "kernels/gemm/sm90/wgmma_gemm_kernel.cuh"

namespace kbench::kernels::gemm::sm90 {

template cudaError_t launch_wgmma_gemm<WeightFp4Bf16Tile128x256>(const WgmmaGemmArgs&, int, cudaStream_t, bool);

}  // namespace kbench::kernels::gemm::sm90
