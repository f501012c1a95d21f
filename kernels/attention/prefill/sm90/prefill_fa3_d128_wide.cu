// fa3 prefill kernels for head dims 128 / 128 with kWideBlockN-key tiles: ragged, non-causal, bf16
// and fp16 inputs (see prefill_fa3.hpp, prefill_fa3_kernel.cuh).
#include "kernels/attention/prefill/sm90/prefill_fa3_kernel.cuh"

namespace kbench::kernels::prefill_fa3 {

cudaError_t launch_d128_wide(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch) {
  return launch_wide<128, 128, kWideBlockN>(args, params, launch);
}

}  // namespace kbench::kernels::prefill_fa3
