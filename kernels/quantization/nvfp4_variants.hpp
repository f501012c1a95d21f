// Issue 17 (NVFP4 8192 x 8192 bf16 at 1.4% under 2.8 TB/s): the NVFP4 kernel variants and grid
// sizes under measurement, chosen per launch from the environment so that one kbench run can time
// them all (bench/quantization/nvfp4_variants.sh). The losers go once the H100 has measured them.
//   KBENCH_NVFP4_VARIANT = baseline (default) | fixed_g | fixed_g_overlap
//   KBENCH_NVFP4_WAVES   = 1..16 (default 4): waves of resident warps that share the items
// Per-token launches (their g is per row) always run the baseline kernel.
#pragma once

#include <cstdint>

namespace kbench::kernels::quantize_detail {

enum class Nvfp4Variant : uint8_t {
  // One kernel for both sources of g: every block scale branches on whether there is a factor table.
  baseline,
  // A kernel for launch-wide g only: the table is always there, so the tile has no per-token branch
  // (~12 of its ~480 instructions) and g is a launch constant rather than a register.
  fixed_g,
  // fixed_g with the table filled after each warp has issued its first tile's loads, so that a new
  // CTA's 256 IEEE divisions and barrier overlap the loads' latency instead of delaying them.
  fixed_g_overlap,
};

struct Nvfp4Tuning {
  Nvfp4Variant variant = Nvfp4Variant::baseline;
  int waves = 4;
};

// Read at every launch (cheap next to a kernel, captured once in kbench's CUDA graphs) so that the
// GPU tests can switch variants between launches. Unknown values keep the defaults.
Nvfp4Tuning nvfp4_tuning_from_environment();

}  // namespace kbench::kernels::quantize_detail
