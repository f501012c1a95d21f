// fa3's variant on the uniform grid (one segment a CTA), lockstep consumers: its translation unit.
#include "kernels/attention/mla/mla_fa3_kernel.cuh"

namespace kbench::kernels::mla_fa3_detail {

KBENCH_MLA_FA3_VARIANT(, false, lockstep)

}  // namespace kbench::kernels::mla_fa3_detail
