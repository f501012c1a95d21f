#include "kernels/common/tensor_map.hpp"

#include <cuda_runtime.h>

namespace kbench::kernels {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &query) !=
            cudaSuccess ||
        query != cudaDriverEntryPointSuccess) {
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encoder;
}

CUtensorMapDataType tensor_map_type(DType dtype) {
  return dtype == DType::bfloat16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
         : dtype == DType::float16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

cudaError_t encode_token_major_map(CUtensorMap* map, const void* base, DType dtype, int heads, int head_dim,
                                   int box_rows, CUtensorMapL2promotion promotion) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return cudaErrorNotSupported;
  const cuuint64_t elem = dtype_size(dtype);
  const cuuint64_t chunk = 128 / elem;  // elements per 128-byte swizzled row
  // Rows: any count (the kernel stays inside its rows); 2^31 - 1 keeps int32 coordinates.
  const cuuint64_t dims[4] = {chunk, 0x7fffffffull, static_cast<cuuint64_t>(heads),
                              static_cast<cuuint64_t>(head_dim) / chunk};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(heads) * head_dim * elem,
                                 static_cast<cuuint64_t>(head_dim) * elem, 128};
  const cuuint32_t box[4] = {static_cast<cuuint32_t>(chunk), static_cast<cuuint32_t>(box_rows), 1,
                             static_cast<cuuint32_t>(head_dim / chunk)};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const CUresult result = encode(map, tensor_map_type(dtype), 4, const_cast<void*>(base), dims, strides, box,
                                 element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t encode_byte_rows_map(CUtensorMap* map, const void* base, int row_bytes, int box_rows) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return cudaErrorNotSupported;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(row_bytes), 0x7fffffffull};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(row_bytes), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result = encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, strides, box,
                                 element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace kbench::kernels
