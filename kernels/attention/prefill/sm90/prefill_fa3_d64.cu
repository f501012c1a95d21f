// fa3 prefill kernels for head_dim_qk 64 / head_dim_vo 64 (see prefill_fa3_kernel.cuh).
#include "kernels/attention/prefill/sm90/prefill_fa3_kernel.cuh"

namespace kbench::kernels::prefill_fa3 {

cudaError_t launch_d64(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch) {
  return launch_dims<64, 64>(args, params, launch);
}

}  // namespace kbench::kernels::prefill_fa3
