#!/usr/bin/env bash
# Session 36, call 9 (refused for lack of device time; ready to run): sc_ab.txt with main and sc (its
# header), one round each, and sc forced into 128 x 128 tiles on it (sc128); the GEMM and MoE GPU
# tests and racecheck / memcheck on sc. Carry .ab/bin (main.xz: 2647cb0; sc.xz: 2647cb0 plus
# groupwise_scale_copier.patch) and build/carry (sc's GPU tests), all built here by scripts/ab.sh pack.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/steps.sh"
R=/tmp/res9; rm -rf $R; mkdir -p $R/sc/ab
unpack_all sc
list=experiments/session36/sc_ab.txt
AB=$R/sc/ab RUN_LIMIT=60
run_as main 1 main
run_as sc 1 sc
run_as sc128 1 sc KBENCH_WGMMA_GEMM_TILES=128x128
python3 experiments/session35/table.py $R/sc/ab
gtests gtest.log 70 'KbenchGemm*:*Moe*:-MoeA2a*:MoeCommA2a*:KbenchGemmFp4*'
sanitize racecheck sc experiments/session36/sanitize_gw.txt racecheck.log 25
sanitize memcheck sc experiments/session36/sanitize_gw.txt memcheck.log 25
finish 9
