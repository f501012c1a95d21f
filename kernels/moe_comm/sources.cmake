# MoE expert-parallel communication over NVLink: dispatch and combine storing straight into the
# peers' workspaces with per-source arrival counters (a2a.cu), the reference's fake expert
# (fake_expert.cu), and the expert stage's picks read from the receive slots (received_picks.cu).
target_sources(kbench_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/a2a.cu
  ${CMAKE_CURRENT_LIST_DIR}/fake_expert.cu
  ${CMAKE_CURRENT_LIST_DIR}/received_picks.cu)
