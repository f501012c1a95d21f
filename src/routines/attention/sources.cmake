# The attention family: decode, prefill and MLA cases, their formulas, kbench's backends; the vendor
# backends by library (compiled where the library is built).
target_sources(kbench_routines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention_formulas.cpp
  ${CMAKE_CURRENT_LIST_DIR}/attention_routines.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decode_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kbench_backends.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mla_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/paged_kv_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/prefill_case.cpp)
list(APPEND KBENCH_ROUTINES_cudnn_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cudnn_backends.cpp)
list(APPEND KBENCH_ROUTINES_flashinfer_SOURCES ${CMAKE_CURRENT_LIST_DIR}/flashinfer_backends.cpp)
