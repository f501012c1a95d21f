# The sampling family: the case (inputs, formulas, the host-side refcheck), the routine table,
# kbench's backends (cuda, cub); FlashInfer's backend where that library is built.
target_sources(kbench_routines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kbench_backends.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sampling_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sampling_checks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sampling_routines.cpp)
list(APPEND KBENCH_ROUTINES_flashinfer_SOURCES ${CMAKE_CURRENT_LIST_DIR}/flashinfer_backends.cpp)
