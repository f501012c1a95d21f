# Sampling family: the row kernels (one translation unit per input dtype; the launch and plans),
# the sort-based baseline (CUB's segmented sort per key dtype, its launch) and the input generators.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/sampling_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/row_kernels_f32.cu
  ${CMAKE_CURRENT_LIST_DIR}/row_kernels_f16.cu
  ${CMAKE_CURRENT_LIST_DIR}/row_kernels_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/sort_baseline_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/sort_baseline_f32.cu
  ${CMAKE_CURRENT_LIST_DIR}/sort_baseline_f16.cu
  ${CMAKE_CURRENT_LIST_DIR}/sort_baseline_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/sampling_inputs.cu)
