# MoE family: the routing kernel (every routing method, fused with the local experts' histogram),
# the permutation index (expert-contiguous rows, the grouped GEMMs' device offsets) and its gather
# in the FC1 GEMM's format (FP8 1x128 or per-tensor quantization fused, NVFP4 / MXFP8 rows as 16-bit
# values, or a copy), the activation with the intermediate's re-quantization (FP8, NVFP4, MXFP8),
# the weighted top-k combine, and the per-tensor FP8 quantizer of the inputs (outside timing).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/routing.cu
  ${CMAKE_CURRENT_LIST_DIR}/permutation.cu
  ${CMAKE_CURRENT_LIST_DIR}/permute_quantize.cu
  ${CMAKE_CURRENT_LIST_DIR}/gated_activation.cu
  ${CMAKE_CURRENT_LIST_DIR}/combine.cu
  ${CMAKE_CURRENT_LIST_DIR}/per_tensor_fp8.cu)
