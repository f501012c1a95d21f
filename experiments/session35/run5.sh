#!/usr/bin/env bash
# Session 35, call 5 (H200): s35d (the staged epilogue everywhere but weight_fp4) -- the GEMM, FP4 and
# MoE GPU tests, compute-sanitizer on the FP4 lines; then fp4_ab.txt on main, s35c and s35d, 2 rounds.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/steps.sh"
R=/tmp/res5; rm -rf $R; mkdir -p $R
unpack_all s35d
gtests gtest.log 100 '*Gemm*:*Fp4*:*Moe*:-MoeA2a*:MoeCommA2a*'
for tool in memcheck racecheck; do sanitize $tool s35d experiments/session35/sanitize_fp4.txt ${tool}_fp4.log 60; done
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
ab fp4 experiments/session35/fp4_ab.txt 2 240
kill $dmon
finish 5
