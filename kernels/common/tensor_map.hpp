// Host side of TMA: cuTensorMapEncodeTiled, taken from the driver the CUDA runtime uses (no link
// against libcuda), shared by the kernels that load through tensor maps.
#pragma once

#include <cudaTypedefs.h>

namespace kbench::kernels {

// The driver's cuTensorMapEncodeTiled (resolved once), or null where the driver lacks it.
[[nodiscard]] PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

}  // namespace kbench::kernels
