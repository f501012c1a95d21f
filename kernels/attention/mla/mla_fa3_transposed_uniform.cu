// fa3's transposed variant on the uniform grid (one segment a CTA): its translation unit.
#include "kernels/attention/mla/mla_fa3_transposed_kernel.cuh"

namespace kbench::kernels::mla_fa3_detail {

KBENCH_MLA_FA3_TRANSPOSED_VARIANT(, false)

}  // namespace kbench::kernels::mla_fa3_detail
