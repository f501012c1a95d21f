#!/usr/bin/env bash
# Session 42, call 5 (H200): r42 (73c1f8e) against u42 (r42 + fp8_l2_promotion_128b.patch: the fp8
# transposed kernel's ckv map at 128 B L2 promotion, as the bf16 one's since session 41) on
# fp8_fixed_42.txt, three rounds in turn.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res5; mkdir -p $R/ab
unpack_bins
AB=$R/ab RUN_LIMIT=100 list=experiments/session42/fp8_fixed_42.txt
for r in 1 2 3; do run_as r42 $r r42; run_as u42 $r u42; done
python3 experiments/session35/table.py $R/ab
cd $R && tar czf $OUT/res5.tgz . && echo "end: $(smi)"
