#!/usr/bin/env bash
# Session 43, call 3 (H200): mm_fp4 with half of B expanded by the consumers (fsc: each consumer
# thread expands one half row of B beside its A, the converter the other half) against fra (a30246f):
# the GEMM, FP4 and MoE GPU tests on fsc; fp4_ab.txt 3 rounds in turn; compute-sanitizer memcheck and
# racecheck on sanitize_fp4.txt. Carry .ab/bin (fra.xz, fsc.xz) and build/carry/gpu_tests.xz.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res3; rm -rf $R; mkdir -p $R/fp4/ab
unpack_all fsc
gtests gtest_gemm.log 200 'KbenchGemm*:*Fp4*:*Moe*:GemmOperands*'
list=experiments/session43/fp4_ab.txt AB=$R/fp4/ab RUN_LIMIT=120
for r in 1 2 3; do for b in fra fsc; do run_as $b $r $b; done; done
for tool in memcheck racecheck; do sanitize $tool fsc experiments/session43/sanitize_fp4.txt ${tool}_fp4.log 150; done
finish 3
