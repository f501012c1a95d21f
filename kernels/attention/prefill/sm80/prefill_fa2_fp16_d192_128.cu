// fa2 prefill kernel for float16 q/k/v, head dims qk 192 / vo 128 (see prefill_fa2.cuh).
#include "kernels/attention/prefill/sm80/prefill_fa2.cuh"

namespace kbench::kernels::prefill_fa2 {

template cudaError_t launch_head_dims<true, 192, 128>(const Fa2Args&, int, bool, cudaStream_t);

}  // namespace kbench::kernels::prefill_fa2
