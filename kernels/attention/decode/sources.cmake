# Decode attention: plan, launch + merge, the fp32 reference; the CUDA-core kernel (fa2) and the
# tensor-core kernel (fa2_tc), each a dispatch and one translation unit per KV dtype.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/decode_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decode_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_reference.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2_fp16.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2_e4m3.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2_e5m2.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2_tc_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2_tc_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2_tc_fp16.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2_tc_e4m3.cu
  ${CMAKE_CURRENT_LIST_DIR}/decode_fa2_tc_e5m2.cu)
