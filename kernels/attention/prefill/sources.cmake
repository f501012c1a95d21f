# Prefill attention: plan, dispatch and the fp32 reference; the kernels by architecture (sm80/ fa2
# on mma.sync, sm90/ fa3 on TMA + wgmma), each folder listing its own translation units.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/prefill_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/prefill_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_reference.cu)
include(${CMAKE_CURRENT_LIST_DIR}/sm80/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/sm90/sources.cmake)
