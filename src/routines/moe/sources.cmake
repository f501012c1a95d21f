# The MoE family: the case (inputs, the reference's formulas, the fp32 reference of the layer), the
# routine table, kbench's pipeline backend (`cuda`).
target_sources(kbench_routines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kbench_backends.cpp
  ${CMAKE_CURRENT_LIST_DIR}/moe_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/moe_routines.cpp)
