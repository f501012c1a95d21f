// FlashInfer's fa2 MLA decode (mla::BatchMLAPagedAttention), bf16, 512/64, causal (see mla.cuh).
#include <flashinfer/attention/mla.cuh>

#include "backends/flashinfer/mla.cuh"

namespace kbench::backends::flashinfer::detail {
namespace {

struct LaunchFa2 {
  template <class Params>
  cudaError_t operator()(const Params& p, uint32_t num_blks_x, uint32_t num_blks_y, cudaStream_t stream) const {
    return ::flashinfer::mla::BatchMLAPagedAttention<::flashinfer::MaskMode::kCausal, kbench_fi::kMlaHeadDimCkv,
                                                     kbench_fi::kMlaHeadDimKpe>(p, num_blks_x, num_blks_y, stream);
  }
};

}  // namespace

std::unique_ptr<MlaImpl> make_mla_fa2_bf16(const MlaShape& shape, cudaStream_t stream) {
  return kbench_fi::make_mla<nv_bfloat16, LaunchFa2>(shape, stream, "fa2");
}
}  // namespace kbench::backends::flashinfer::detail
