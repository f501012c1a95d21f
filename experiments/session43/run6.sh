#!/usr/bin/env bash
# Session 43, call 6 (H200): the FP4 MoE's 64 x 128 weight_fp4 tiles with two converter warpgroups
# and 7 16-bit stages (w7s; call 5's w2c had 3) against fra (a30246f): the GEMM, FP4 and MoE GPU tests
# on w7s; moe_fp4_ab2.txt 2 rounds in turn; compute-sanitizer memcheck and racecheck on
# sanitize_fp4.txt. Carry .ab/bin (fra.xz, w7s.xz) and build/carry/gpu_tests.xz.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res6; rm -rf $R; mkdir -p $R/moe/ab
unpack_all w7s
gtests gtest_gemm.log 200 'KbenchGemm*:*Fp4*:*Moe*:GemmOperands*'
list=experiments/session43/moe_fp4_ab2.txt AB=$R/moe/ab RUN_LIMIT=120
for r in 1 2; do for b in fra w7s; do run_as $b $r $b; done; done
for tool in memcheck racecheck; do sanitize $tool w7s experiments/session43/sanitize_fp4.txt ${tool}_fp4.log 150; done
finish 6
