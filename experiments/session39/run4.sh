#!/usr/bin/env bash
# Session 39, call 4 (H200): g2 (869b59e's double-buffered loop in its own instantiation, taken where
# 128 x 128 tiles fill the SMs; the decode rule's 128 x 128 tiles keep one temporary and the turns)
# against main, three rounds; g2's GEMM GPU tests; compute-sanitizer on both 128 x 128 loops.
# Carry .ab/bin and build/carry.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res4; rm -rf $R; mkdir -p $R/gemm/ab
unpack_all g2
AB=$R/gemm/ab RUN_LIMIT=120
list=experiments/session39/g2_ab.txt
for r in 1 2 3; do for b in main g2; do run_as $b $r $b; done; done
echo "after gemm ab: $(smi)"
gtests gtest_gemm.log 200 'KbenchGemm*:-KbenchGemmFp4*'
sanitize racecheck g2 experiments/session39/sanitize_db.txt racecheck_db.log 100 KBENCH_WGMMA_GEMM_TILES=128x128
sanitize memcheck g2 experiments/session39/sanitize_db.txt memcheck_db.log 60 KBENCH_WGMMA_GEMM_TILES=128x128
sanitize racecheck g2 experiments/session36/sanitize_gw.txt racecheck_turns.log 100 KBENCH_WGMMA_GEMM_TILES=128x128-turns
finish 4
