#!/usr/bin/env bash
# Session 42, call 4 (H200): p42, r42 (call 3's) and s42 (p42 + the fp8 transposed kernel's segment
# at 5 tiles in the cost model, the greedy schedule kept: r42 without the bisection) on plan_42.txt,
# three rounds in a rotating order.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res4; mkdir -p $R/ab
unpack_bins
AB=$R/ab RUN_LIMIT=120 list=experiments/session42/plan_42.txt
run_as p42 1 p42; run_as r42 1 r42; run_as s42 1 s42
run_as r42 2 r42; run_as s42 2 s42; run_as p42 2 p42
run_as s42 3 s42; run_as p42 3 p42; run_as r42 3 r42
python3 experiments/session35/table.py $R/ab
cd $R && tar czf $OUT/res4.tgz . && echo "end: $(smi)"
