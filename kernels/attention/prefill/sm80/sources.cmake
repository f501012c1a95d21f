# fa2 prefill (mma.sync, sm_80+): its dispatch and one translation unit per instantiation set.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa2_launch.cu)
