// fa3's transposed variant on a balanced schedule (a CTA an SM, its segments in turn): its translation unit.
#include "kernels/attention/mla/mla_fa3_transposed_kernel.cuh"

namespace kbench::kernels::mla_fa3_detail {

KBENCH_MLA_FA3_TRANSPOSED_VARIANT(, true)

}  // namespace kbench::kernels::mla_fa3_detail
