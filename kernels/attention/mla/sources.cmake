# MLA decode: the fp32 reference, the split-KV plan and merge both kernels share, kbench's fa2
# kernel (mma.sync, bf16 and fp8 e4m3 KV) and its Hopper fa3 kernel (wgmma, bf16; the host side, then
# its uniform-grid and balanced-schedule variants with lockstep or seesaw consumers (bf16, fp8), and the
# transposed variants for few query rows (fp8 KV, bf16 KV), one translation unit each).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/mla_reference.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_split.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa2.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_uniform.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_balanced.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_uniform_seesaw.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_balanced_seesaw.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_uniform_seesaw_fp8.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_balanced_seesaw_fp8.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_transposed_uniform.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_transposed_balanced.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_transposed_bf16_uniform.cu
  ${CMAKE_CURRENT_LIST_DIR}/mla_fa3_transposed_bf16_balanced.cu)
# wgmma and setmaxnreg exist only in sm_90a code: elsewhere fa3's body traps, so it must refuse.
if(CMAKE_CUDA_ARCHITECTURES MATCHES "(^|;)90a")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/mla_fa3.cu
    TARGET_DIRECTORY kbench_kernels PROPERTIES COMPILE_DEFINITIONS KBENCH_MLA_FA3_BUILT_FOR_SM90A=1)
endif()
