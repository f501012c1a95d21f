// fa3 prefill kernels for head dims 256 / 256 with kHead256WideBlockN-key tiles: ragged, bf16 and
// fp16 inputs (see prefill_fa3.hpp, prefill_fa3_kernel.cuh).
// CuTe's wgmma selector offers N = 80 (64 x 80 x 16) only with its extended shapes; this unit alone
// instantiates an 80-wide S GEMM.
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include "kernels/attention/prefill/sm90/prefill_fa3_kernel.cuh"

namespace kbench::kernels::prefill_fa3 {

cudaError_t launch_d256_wide(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch) {
  return launch_wide<256, 256, kHead256WideBlockN>(args, params, launch);
}

}  // namespace kbench::kernels::prefill_fa3
