#!/usr/bin/env bash
# Session 42, call 9 (H200): r42 (73c1f8e), q42 (call 8's: Q^T staging unrolled, branch-free; 6.7%
# slower on gathered pages of 16) and qb42 (q42 with its |q| pass unrolled by 3, not 9) on
# stage_42.txt, three rounds in a rotating order.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res9; mkdir -p $R/ab
unpack_bins
AB=$R/ab RUN_LIMIT=70 list=experiments/session42/stage_42.txt
run_as r42 1 r42; run_as q42 1 q42; run_as qb42 1 qb42
run_as q42 2 q42; run_as qb42 2 qb42; run_as r42 2 r42
run_as qb42 3 qb42; run_as r42 3 r42; run_as q42 3 q42
python3 experiments/session35/table.py $R/ab
cd $R && tar czf $OUT/res9.tgz . && echo "end: $(smi)"
