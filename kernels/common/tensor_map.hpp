// Host side of TMA: cuTensorMapEncodeTiled, taken from the driver the CUDA runtime uses (no link
// against libcuda), shared by the kernels that load through tensor maps.
#pragma once

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "kbench/dtype.hpp"

namespace kbench::kernels {

// The driver's cuTensorMapEncodeTiled (resolved once), or null where the driver lacks it.
[[nodiscard]] PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

// The tensor-map element type of a 16-bit float or a byte type.
[[nodiscard]] CUtensorMapDataType tensor_map_type(DType dtype);

// Encodes the 4-D tensor map of a token-major tensor [rows][heads][head_dim]: dims (128-byte chunk
// of E elements, rows, heads, chunks), box (E, box_rows, 1, head_dim / E), 128-byte swizzle, so a
// box lands in shared memory as [chunk][box_rows][128 bytes] (the layout wgmma descriptors read).
// rows is unbounded (the kernel never reads past its last row; negative rows read as zeros).
// promotion: how much L2 fetches around each 128-byte line a box reads (boxes of one 128-byte chunk
// of rows several chunks wide can lose HBM efficiency at 256 B: mla_fa3.cu).
[[nodiscard]] cudaError_t encode_token_major_map(CUtensorMap* map, const void* base, DType dtype, int heads,
                                                 int head_dim, int box_rows,
                                                 CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B);

// Encodes the 2-D tensor map of a byte tensor [rows][row_bytes] (row_bytes a multiple of 16, at most
// 256): box [box_rows][row_bytes], unswizzled, landing as the rows one after another.
[[nodiscard]] cudaError_t encode_byte_rows_map(CUtensorMap* map, const void* base, int row_bytes, int box_rows);

}  // namespace kbench::kernels
