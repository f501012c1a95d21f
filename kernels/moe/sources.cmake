# MoE family: the routing kernel (every routing method, fused with the local experts' histogram),
# the permutation index (expert-contiguous rows, the grouped GEMMs' device offsets) and its gather
# with the FP8 1x128 quantization fused, the gated activation with the intermediate's
# re-quantization, and the weighted top-k combine.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/routing.cu
  ${CMAKE_CURRENT_LIST_DIR}/permutation.cu
  ${CMAKE_CURRENT_LIST_DIR}/permute_quantize.cu
  ${CMAKE_CURRENT_LIST_DIR}/gated_activation.cu
  ${CMAKE_CURRENT_LIST_DIR}/combine.cu)
