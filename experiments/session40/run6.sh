#!/usr/bin/env bash
# Session 40, call 6 (H200): call 5's r40 ran the memory-bound row at a steady 300 us (FlashInfer 280,
# main's lockstep 287-306). Does it lose by issuing a tile's chunk boxes one by one as slots free?
# burst = r40 + KBENCH_EXP_BURST (every slot of a tile free first, then its nine boxes back to back),
# against r40 and main, three rounds, order rotated.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res6; rm -rf $R; mkdir -p $R/mla/ab
unpack_bins
AB=$R/mla/ab RUN_LIMIT=60
list=experiments/session40/mb.txt
for r in 1 2 3; do
  run_as r40 $r burst; run_as burst $r burst KBENCH_EXP_BURST=1; run_as main $r main
done
finish 6
