# MLA decode: the fp32 reference and kbench's fa2 kernel (mma.sync, bf16; fp8 KV and the Hopper fa3
# kernel come with issue 19's next steps).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/mla_reference.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa2.cu)
