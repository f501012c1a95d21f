// FlashInfer's Hopper MLA decode (mla::BatchMLAPageAttentionHopper), bf16, 512/64, causal (see
// mla.cuh); built for sm_90a only.
#include <flashinfer/attention/mla_hopper.cuh>

#include "backends/flashinfer/mla.cuh"

namespace kbench::backends::flashinfer::detail {
namespace {

struct LaunchFa3 {
  template <class Params>
  cudaError_t operator()(const Params& p, uint32_t num_blks_x, uint32_t num_blks_y, cudaStream_t stream) const {
    return ::flashinfer::mla::BatchMLAPageAttentionHopper<::flashinfer::MaskMode::kCausal, kbench_fi::kMlaHeadDimCkv,
                                                          kbench_fi::kMlaHeadDimKpe>(p, num_blks_x, num_blks_y,
                                                                                     stream);
  }
};

}  // namespace

std::unique_ptr<MlaImpl> make_mla_fa3_bf16(const MlaShape& shape, cudaStream_t stream) {
  return kbench_fi::make_mla<nv_bfloat16, LaunchFa3>(shape, stream, "fa3");
}
}  // namespace kbench::backends::flashinfer::detail
