# Norm family: the RMSNorm launch, the fp32 reference, and one translation unit per (input dtype,
# output dtype) instantiation set; the SiLU epilogue (fused_rmsnorm_silu); the fused RMSNorm + FP4
# kernels (rmsnorm_fp4quant, add_rmsnorm_fp4quant) per (input dtype, format); LayerNorm + FP8
# (layernorm_quant) per input dtype.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_reference.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_bf16_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_bf16_e4m3.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_bf16_e5m2.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp16_fp16.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp16_e4m3.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp16_e5m2.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_silu_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_silu_fp16.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp4_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp4_bf16_nvfp4.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp4_bf16_mxfp4.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp4_fp16_nvfp4.cu
  ${CMAKE_CURRENT_LIST_DIR}/rmsnorm_fp4_fp16_mxfp4.cu
  ${CMAKE_CURRENT_LIST_DIR}/layernorm_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/layernorm_bf16.cu
  ${CMAKE_CURRENT_LIST_DIR}/layernorm_fp16.cu)
