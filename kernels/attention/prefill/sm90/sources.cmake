# fa3 prefill (TMA + wgmma, sm_90a): its dispatch and one translation unit per instantiation set.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_launch.cu)
