# fa3 prefill (TMA + wgmma, sm_90a): its dispatch and one translation unit per head-dim pair (each
# instantiating the kernel for bf16 and fp16).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d64.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d128.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d256.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d192_128.cu)
