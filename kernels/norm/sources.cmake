# RMSNorm family: the launch, the fp32 reference, and one translation unit per (input dtype,
# output dtype) instantiation set.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_reference.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_bf16_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_bf16_e4m3.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_bf16_e5m2.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp16_fp16.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp16_e4m3.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp16_e5m2.cu)
