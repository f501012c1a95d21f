# kbench's FP8 GEMM (TMA + wgmma, sm_90a): its launch and tile heuristic, and one translation unit
# per instantiation (groupwise and per-tensor scaling, 128 x 256 and 64 x 128 tiles, e4m3).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/fp8_gemm_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp8_gemm_groupwise_128x256.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp8_gemm_groupwise_64x128.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp8_gemm_per_tensor_128x256.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp8_gemm_per_tensor_64x128.cu)
# wgmma and setmaxnreg exist only in sm_90a code: elsewhere the kernels trap, so the backend refuses.
if(CMAKE_CUDA_ARCHITECTURES MATCHES "(^|;)90a")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/fp8_gemm_launch.cu
    TARGET_DIRECTORY kbench_kernels PROPERTIES COMPILE_DEFINITIONS KBENCH_GEMM_BUILT_FOR_SM90A=1)
endif()
