// fa2_tc decode kernels for an fp8_e4m3 KV cache: head_dim 64, 128, 256 (see decode_fa2_tc.cuh).
#include "kernels/attention/decode/decode_fa2_tc.cuh"

namespace kbench::kernels::decode_tc_detail {

cudaError_t launch_e4m3(const TcArgs& args, int head_dim, int num_items, int m_tiles, int max_smem, int device,
                        bool pdl, cudaStream_t stream) {
  return launch_typed<__nv_fp8_e4m3>(args, head_dim, num_items, m_tiles, max_smem, device, pdl, stream);
}

}  // namespace kbench::kernels::decode_tc_detail
