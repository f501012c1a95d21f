// fa3's transposed variant for bf16 KV on the uniform grid (one segment a CTA): its translation unit.
#include "kernels/attention/mla/mla_fa3_transposed_bf16_kernel.cuh"

namespace kbench::kernels::mla_fa3_detail {

KBENCH_MLA_FA3_TRANSPOSED_BF16_VARIANT(, false)

}  // namespace kbench::kernels::mla_fa3_detail
