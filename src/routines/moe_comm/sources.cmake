# The MoE communication family: moe_a2a_dispatch_combine's case (every rank's inputs, the
# reference's traffic formula, the refcheck), kbench's NVLink kernels (`moe_a2a`) and, where NCCL
# was found, NCCL's grouped send/receive (`nccl`).
target_sources(kbench_routines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/a2a_backends.cpp
  ${CMAKE_CURRENT_LIST_DIR}/a2a_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/a2a_operation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/moe_comm_routines.cpp)
list(APPEND KBENCH_ROUTINES_nccl_SOURCES ${CMAKE_CURRENT_LIST_DIR}/nccl_backends.cpp)
