# MoE family: the routing kernel (every routing method, fused with the local experts' histogram).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/routing.cu)
