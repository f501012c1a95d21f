#!/usr/bin/env bash
# Session 29, call 7: are the prefill grid's head-256 and random-length losses to FlashInfer's fa3
# real? The points with 60 iterations (the grid takes 10) in two backend orders, then ncu's kernel
# durations at locked base clocks (no power-cap drift between backends).
source "$(dirname "$0")/../session25/common.sh"
D=experiments/session29
unpack .ab/bin/new.xz /tmp/b/kbench; K=/tmp/b/kbench
$K --testlist $D/order7.txt --output_path $OUT/order7.csv >$OUT/order7.log 2>&1; echo "order exit $?"
grep -E "Backends:" $OUT/order7.log
echo "mid: $(smi)"
timeout 200 ncu --clock-control base --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second --csv $K --testlist $D/ncu7.txt >$OUT/ncu7.csv 2>/dev/null; echo "ncu exit $?"
echo "end: $(smi)"
