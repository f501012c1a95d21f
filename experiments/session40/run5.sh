#!/usr/bin/env bash
# Session 40, call 5 (H200): r40 (fa3's transposed kernel for bf16 KV: at most 16 query rows, keys
# on wgmma's M, a 24-slot chunk ring, each warpgroup owning half of each tile) against main (3b2ebc2) on t_ab.txt, three rounds, the order swapped each
# round; the MLA GPU tests; compute-sanitizer racecheck / memcheck on sanitize_bf16.txt.
# Carry .ab/bin and build/carry.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res5; rm -rf $R; mkdir -p $R/mla/ab
unpack_all r40
gtests gtest_mla.log 200 '*Mla*'
AB=$R/mla/ab RUN_LIMIT=120
list=experiments/session40/t_ab.txt
run_as main 1 main; run_as r40 1 r40; run_as r40 2 r40; run_as main 2 main; run_as main 3 main; run_as r40 3 r40
echo "after ab: $(smi)"
sanitize racecheck r40 experiments/session40/sanitize_bf16.txt racecheck.log 100
sanitize memcheck r40 experiments/session40/sanitize_bf16.txt memcheck.log 60
finish 5
