#!/usr/bin/env bash
# Session 41, call 7 (H200): cb41.txt (the bf16 compute-bound row) with m41 and fc41 in turn, four
# rounds (calls 3-4 left open whether the fix costs it ~4%); final41.txt with fc41, two rounds.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res7; mkdir -p $R/cb $R/final
unpack_bins
AB=$R/cb RUN_LIMIT=20 list=experiments/session41/cb41.txt
for r in 1 2 3 4; do run_as m41 $r m41; run_as fc41 $r fc41; done
AB=$R/final RUN_LIMIT=40 list=experiments/session41/final41.txt
for r in 1 2; do run_as fc41 $r fc41; done
python3 experiments/session35/table.py $R/cb $R/final
cd $R && tar czf $OUT/res7.tgz . && echo "end: $(smi)"
