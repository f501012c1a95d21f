# The MoE family: the case (inputs, the reference's formulas, the fp32 reference of the layer), the
# routine table, kbench's pipeline (moe_pipeline) on kbench's grouped GEMM (`cuda`) and, where
# CUTLASS is built, on CUTLASS's (`cutlass`).
target_sources(kbench_routines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kbench_backends.cpp
  ${CMAKE_CURRENT_LIST_DIR}/moe_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/moe_pipeline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/moe_routines.cpp)
list(APPEND KBENCH_ROUTINES_cutlass_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cutlass_backends.cpp)
