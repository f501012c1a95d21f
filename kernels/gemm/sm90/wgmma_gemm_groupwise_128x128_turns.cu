// One instantiation of kbench's wgmma GEMM kernel (wgmma_gemm_kernel.cuh): GroupwiseTile128x128Turns
// (the decode rule's 128 x 128 tiles: one temporary, turns).
#include "kernels/gemm/sm90/wgmma_gemm_kernel.cuh"

namespace kbench::kernels::gemm::sm90 {

template cudaError_t launch_wgmma_gemm<GroupwiseTile128x128Turns>(const WgmmaGemmArgs&, int, cudaStream_t, bool);

}  // namespace kbench::kernels::gemm::sm90
