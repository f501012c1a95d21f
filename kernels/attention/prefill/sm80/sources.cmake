# fa2 prefill (mma.sync, sm_80+): its dispatch and one translation unit per (dtype, head dims).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_bf16_d64.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_bf16_d128.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_bf16_d256.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_bf16_d192_128.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_fp16_d64.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_fp16_d128.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_fp16_d256.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_fp16_d192_128.cu)
