# Block quantization (MXFP8, MXFP4, NVFP4): the launch and one translation unit per input dtype
# (each holds the four format instantiations and the per-token row-amax kernel).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/quantize_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/quantize_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/quantize_fp16.cu)
