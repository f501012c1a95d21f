# The RMSNorm family: the case (inputs, reference, formulas), the routine table, kbench's backend;
# the vendor backends by library (compiled where the library is built).
target_sources(kbench_routines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kbench_backends.cpp
  ${CMAKE_CURRENT_LIST_DIR}/norm_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/norm_routines.cpp)
list(APPEND KBENCH_ROUTINES_flashinfer_SOURCES ${CMAKE_CURRENT_LIST_DIR}/flashinfer_backends.cpp)
