# kbench's wgmma GEMM (TMA + wgmma, sm_90a): its launch and tile heuristic, and one translation unit
# per instantiation: e4m3 groupwise and per-tensor, bf16 and fp16 unscaled, block-scaled FP4
# (expanded to bf16) and weight-only FP4 (B expanded to A's bf16 or fp16), each in 128 x 256 and
# 64 x 128 tiles; groupwise also in 128 x 128 tiles (shapes whose 128 x 256 tiles leave SMs idle: the
# promotion overlapped where they fill the SMs, with turns at decode sizes); and the swapped FP4 kernel
# (weight_fp4 on groups of a few rows: the weights on wgmma's M, expanded in registers), bf16 and fp16,
# 16 or 64 rows of A a unit.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_groupwise_128x256.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_groupwise_128x128.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_groupwise_128x128_turns.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_groupwise_64x128.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_per_tensor_128x256.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_per_tensor_64x128.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_bf16_128x256.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_bf16_64x128.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_fp16_128x256.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_fp16_64x128.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_fp4_128x256.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_fp4_64x128.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_weight_fp4_bf16_128x256.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_weight_fp4_bf16_64x128.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_weight_fp4_fp16_128x256.cu
  ${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_weight_fp4_fp16_64x128.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp4_swapped_bf16_16.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp4_swapped_bf16_64.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp4_swapped_fp16_16.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp4_swapped_fp16_64.cu)
# wgmma and setmaxnreg exist only in sm_90a code: elsewhere the kernels trap, so the backend refuses.
if(CMAKE_CUDA_ARCHITECTURES MATCHES "(^|;)90a")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/wgmma_gemm_launch.cu
    TARGET_DIRECTORY kbench_kernels PROPERTIES COMPILE_DEFINITIONS KBENCH_GEMM_BUILT_FOR_SM90A=1)
endif()
