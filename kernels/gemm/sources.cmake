# GEMM (issue 18): the FP8 operand builders (per-tensor and groupwise) and the refcheck's fp32
# reference GEMM; one translation unit each, every dtype behind a runtime switch (no instantiations
# to multiply CI's compile time).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/operand_quantize.cu
  ${CMAKE_CURRENT_LIST_DIR}/reference_gemm.cu)
include(${CMAKE_CURRENT_LIST_DIR}/sm90/sources.cmake)
