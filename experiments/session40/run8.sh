#!/usr/bin/env bash
# Session 40, call 8 (H200): the memory-bound row with every tile gathered by the producers'
# cp.async (KBENCH_EXP_GATHER=ca: L1-allocating, as kbench's gathers; =cg: L2 only) instead of TMA
# boxes, on r40's transposed bf16 kernel (gx = r40 + the knob), against TMA (gx plain) and main.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res8; rm -rf $R; mkdir -p $R/mla/ab
unpack_bins
AB=$R/mla/ab RUN_LIMIT=60
list=experiments/session40/mb.txt
for r in 1 2 3; do
  run_as tma $r gx; run_as ca $r gx KBENCH_EXP_GATHER=ca; run_as cg $r gx KBENCH_EXP_GATHER=cg; run_as main $r main
done
finish 8
