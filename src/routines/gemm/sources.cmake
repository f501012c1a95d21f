# GEMMs (issue 18): so far the host reference of the groupwise FP8 GEMMs.
target_sources(kbench_routines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/gemm_reference.cpp)
