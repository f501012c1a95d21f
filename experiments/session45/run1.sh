#!/usr/bin/env bash
# Session 45, call 1 (H200): the swapped FP4 kernel. Its GEMM and FP4 MoE GPU tests, compute-sanitizer
# on them, then the FP4 layer at decode token counts against the tiled FP4 GEMM, beside FP8.
source "$(dirname "$0")/steps.sh"
R=$OUT/r1
mkdir -p "$R"
unpack_all k45
gtests gtest_gemm_moe.log 200 'KbenchGemmGroups.*:WgmmaGemm*:MoeEndToEnd.*:MoeNvfp4*'
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool /tmp/b/gt --gtest_filter='KbenchGemmGroups.WeightFp4Swapped' >"$R/${tool}_gtest.log" 2>&1
  echo "$tool gtest exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$R/${tool}_gtest.log" | tr '\n' ' ')"
  sanitize $tool k45 experiments/session45/sanitize_swapped.txt ${tool}_moe.log 100
done
RUN_LIMIT=200 swap_rounds 3
finish 1
