// fa3 prefill kernels for head_dim_qk 256 / head_dim_vo 256 (see prefill_fa3_kernel.cuh).
#include "kernels/attention/prefill/sm90/prefill_fa3_kernel.cuh"

namespace kbench::kernels::prefill_fa3 {

cudaError_t launch_d256(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch) {
  return launch_dims<256, 256>(args, params, launch);
}

}  // namespace kbench::kernels::prefill_fa3
