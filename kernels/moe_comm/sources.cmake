# MoE expert-parallel communication over NVLink: dispatch and combine storing straight into the
# peers' workspaces with per-source arrival counters (a2a.cu), and the reference's fake expert
# (fake_expert.cu).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/a2a.cu
  ${CMAKE_CURRENT_LIST_DIR}/fake_expert.cu)
