// fa2_tc decode kernels for an fp8_e5m2 KV cache: head_dim 64, 128, 256, and head pairs at 128
// (see decode_fa2_tc.cuh).
#include "kernels/attention/decode/decode_fa2_tc.cuh"

namespace kbench::kernels::decode_tc_detail {

cudaError_t launch_e5m2(const TcArgs& args, int head_dim, int items_per_cta, int m_tiles, int max_smem, bool pdl,
                        cudaStream_t stream) {
  return launch_typed<__nv_fp8_e5m2>(args, head_dim, items_per_cta, m_tiles, max_smem, pdl, stream);
}

}  // namespace kbench::kernels::decode_tc_detail
