// SCAFFOLD (replaced by the fa3 kernel's own dispatch): lets the tree link while the kernel is written.
#include "kernels/attention/prefill/prefill_internal.hpp"

namespace kbench::kernels::prefill_detail {

int fa3_block_m(const PrefillParams&) { return 128; }
bool fa3_supported(const PrefillParams&) { return false; }
cudaError_t fa3_available() { return cudaErrorNotSupported; }
cudaError_t launch_fa3(const PrefillParams&, const PrefillWorkspace&, cudaStream_t) { return cudaErrorNotSupported; }

}  // namespace kbench::kernels::prefill_detail
