// fa3's variant on the uniform grid (one segment a CTA), seesaw consumers on fp8 KV: its translation unit.
#include "kernels/attention/mla/mla_fa3_kernel.cuh"

namespace kbench::kernels::mla_fa3_detail {

KBENCH_MLA_FA3_VARIANT(, false, seesaw_fp8)

}  // namespace kbench::kernels::mla_fa3_detail
