#!/usr/bin/env bash
# Session 40, call 9 (H200): r40's memory-bound row (DRAM 84.6% busy against FlashInfer's 88.6%,
# call 7) with the ckv / kpe tensor maps' L2 promotion (px = r40 + KBENCH_EXP_L2_PROMOTION: 0 none,
# 1 64 B, 2 128 B; 256 B the default) against the default and main, three rounds.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res9; rm -rf $R; mkdir -p $R/mla/ab
unpack_bins
AB=$R/mla/ab RUN_LIMIT=60
list=experiments/session40/mb.txt
for r in 1 2 3; do
  run_as p256 $r px; run_as none $r px KBENCH_EXP_L2_PROMOTION=0; run_as p64 $r px KBENCH_EXP_L2_PROMOTION=1
  run_as p128 $r px KBENCH_EXP_L2_PROMOTION=2; run_as main $r main
done
finish 9
