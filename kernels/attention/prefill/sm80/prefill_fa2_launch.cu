// SCAFFOLD (replaced by the fa2 kernel's own dispatch): lets the tree link while the kernel is written.
#include "kernels/attention/prefill/prefill_internal.hpp"

namespace kbench::kernels::prefill_detail {

int fa2_block_m(const PrefillParams&) { return 128; }
bool fa2_supported(const PrefillParams&) { return false; }
cudaError_t fa2_available() { return cudaErrorNotSupported; }
cudaError_t launch_fa2(const PrefillParams&, const PrefillWorkspace&, cudaStream_t) { return cudaErrorNotSupported; }

}  // namespace kbench::kernels::prefill_detail
