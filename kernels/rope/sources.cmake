# RoPE (apply_rope and its variants, the FP8 variants): the launch and one translation unit per
# element dtype and kernel.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/rope_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/rope_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/rope_fp16.cu
  ${CMAKE_CURRENT_LIST_DIR}/rope_quantize_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/rope_quantize_fp16.cu)
