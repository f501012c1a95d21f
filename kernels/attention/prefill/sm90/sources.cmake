# fa3 prefill (TMA + wgmma, sm_90a): its dispatch and one translation unit per head-dim pair (each
# instantiating the kernel for bf16, fp16 and, for head dims 128 and 256, fp8_e4m3), plus one each
# for the wide KV tiles of head 128 (ragged, non-causal) and head 256 (ragged), bf16 and fp16.
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_launch.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d64.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d128.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d128_wide.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d256.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d256_wide.cu
  ${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_d192_128.cu)
# wgmma and setmaxnreg exist only in sm_90a code: a build for plain sm_90 (or "native", which nvcc
# takes as sm_90 on an H100) has kernels whose bodies trap, so fa3 must refuse to run there.
if(CMAKE_CUDA_ARCHITECTURES MATCHES "(^|;)90a")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/prefill_fa3_launch.cu
    TARGET_DIRECTORY kbench_kernels PROPERTIES COMPILE_DEFINITIONS KBENCH_FA3_BUILT_FOR_SM90A=1)
endif()
