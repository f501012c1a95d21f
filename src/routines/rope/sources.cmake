# RoPE: the cases (inputs, host reference, formulas), the routine table, kbench's backend; the
# vendor backends by library (compiled where the library is built).
target_sources(kbench_routines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kbench_backends.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rope_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rope_quantize_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rope_reference.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rope_routines.cpp)
list(APPEND KBENCH_ROUTINES_flashinfer_SOURCES ${CMAKE_CURRENT_LIST_DIR}/flashinfer_backends.cpp)
