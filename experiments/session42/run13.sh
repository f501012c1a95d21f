#!/usr/bin/env bash
# Session 42, call 13 (H200): f42 (32c4615) against t42 (f42 + a CTA's first Q^T staged after its first
# two tiles where TMA loads them) on first_q_42.txt, three rounds in turn.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res13; mkdir -p $R/ab
unpack_bins
AB=$R/ab RUN_LIMIT=70 list=experiments/session42/first_q_42.txt
for r in 1 2 3; do run_as f42 $r f42; run_as t42 $r t42; done
python3 experiments/session35/table.py $R/ab
cd $R && tar czf $OUT/res13.tgz . && echo "end: $(smi)"
