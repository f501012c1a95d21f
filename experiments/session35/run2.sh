#!/usr/bin/env bash
# Session 35, call 2 (H200): s35b (call 1's staged epilogue, and FC1's GLU epilogue staged too): the
# whole GPU test binary, then compute-sanitizer memcheck and racecheck on the GEMM routines (both tile
# shapes) and the MoE pipelines (sanitize_moe.txt's second line then had 300 tokens, hidden 1024).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/steps.sh"
R=/tmp/res2; rm -rf $R; mkdir -p $R
unpack_all s35b
gtests gtest_all.log 330
gemm_sanitizers s35b
for tool in memcheck racecheck; do sanitize $tool s35b experiments/session35/sanitize_moe.txt ${tool}_moe.log 90; done
xz -T0 -6 "$R/gtest_all.log"
finish 2
