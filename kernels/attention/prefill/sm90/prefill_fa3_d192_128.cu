// fa3 prefill kernels for head_dim_qk 192 / head_dim_vo 128 (see prefill_fa3_kernel.cuh).
#include "kernels/attention/prefill/sm90/prefill_fa3_kernel.cuh"

namespace kbench::kernels::prefill_fa3 {

cudaError_t launch_d192_128(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch) {
  return launch_dims<192, 128>(args, params, launch);
}

}  // namespace kbench::kernels::prefill_fa3
