# GEMMs (issue 18): the case (operands, formulas, fp32 reference, refcheck rule), the routine table,
# the host reference of the groupwise FP8 rules, the block scales rewritten for a library's layouts,
# kbench's own FP8 GEMM backend (`cuda`);
# the cuBLASLt and CUTLASS backends where their libraries are built.
target_sources(kbench_routines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/block_scale_layouts.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_reference.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_routines.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kbench_backends.cpp)
list(APPEND KBENCH_ROUTINES_cublas_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cublas_backends.cpp)
list(APPEND KBENCH_ROUTINES_cutlass_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cutlass_backends.cpp)
list(APPEND KBENCH_ROUTINES_cudnn_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cudnn_backends.cpp)
