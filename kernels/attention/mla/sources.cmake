# MLA decode: the fp32 reference (kbench's own fa2 / fa3 MLA kernels come with issue 19's next steps).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/mla_reference.cu)
