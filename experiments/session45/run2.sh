#!/usr/bin/env bash
# Session 45, call 2 (H200): the swapped kernel's variants (p2: two consumer warpgroups with each
# group's codes loaded a group ahead; p4: four consumer warpgroups of 64 rows, the same loads)
# against call 1's (v1) and the tiled FP4 GEMM; p4's GEMM and MoE GPU tests and compute-sanitizer.
source "$(dirname "$0")/steps.sh"
R=$OUT/r2
mkdir -p "$R"
unpack_all k45p4
gtests gtest_gemm_moe.log 200 'KbenchGemmGroups.WeightFp4*:MoeEndToEnd.*:MoeNvfp4*'
for tool in memcheck racecheck; do sanitize $tool k45p4 experiments/session45/sanitize_swapped.txt ${tool}_moe.log 100; done
RUN_LIMIT=200 variant_rounds 2
finish 2
