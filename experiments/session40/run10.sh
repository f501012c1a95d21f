#!/usr/bin/env bash
# Session 40, call 10 (H200): call 9 found r40's memory-bound row at 280 us with the tensor maps'
# L2 promotion at 128 B, 64 B or none, against 301 us at the 256 B kbench uses (FlashInfer 285-293).
# Every fa3 path that loads by those maps (promo_ab.txt) under 256 B (the default), 128 B and none,
# two rounds, order rotated (px = r40 + the knob).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res10; rm -rf $R; mkdir -p $R/mla/ab
unpack_bins
AB=$R/mla/ab RUN_LIMIT=150
list=experiments/session40/promo_ab.txt
run_as p256 1 px; run_as p128 1 px KBENCH_EXP_L2_PROMOTION=2; run_as none 1 px KBENCH_EXP_L2_PROMOTION=0
run_as none 2 px KBENCH_EXP_L2_PROMOTION=0; run_as p128 2 px KBENCH_EXP_L2_PROMOTION=2; run_as p256 2 px
finish 10
