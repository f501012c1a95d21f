// fa3 prefill kernels for head_dim_qk 128 / head_dim_vo 128 (see prefill_fa3_kernel.cuh).
#include "kernels/attention/prefill/sm90/prefill_fa3_kernel.cuh"

namespace kbench::kernels::prefill_fa3 {

cudaError_t launch_d128(Fa3Args& args, const PrefillParams& params, const Fa3Launch& launch) {
  return launch_dims<128, 128>(args, params, launch);
}

// The image probe of fa3_available.
cudaError_t probe_kernel_image() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, fa3_prefill_kernel<Fa3Config<cute::bfloat16_t, 128, 128, block_n(128)>>);
}

}  // namespace kbench::kernels::prefill_fa3
