#!/usr/bin/env bash
# Session 42, call 8 (H200): r42 (73c1f8e) against q42 (r42 + the fp8 transposed kernel's Q^T staging
# unrolled, unsigned, branch-free: call 7's probe timed it at ~6 K cycles a segment, ~4.7 K at the
# first) on fp8_42.txt, three rounds in turn; the MLA GPU tests, racecheck and memcheck (q42).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res8; mkdir -p $R/ab
unpack_all q42
AB=$R/ab RUN_LIMIT=70 list=experiments/session42/fp8_42.txt
for r in 1 2 3; do run_as r42 $r r42; run_as q42 $r q42; done
python3 experiments/session35/table.py $R/ab
gtests gtest_mla.log 80 '*Mla*'
sanitize racecheck q42 experiments/session42/sanitize_fp8.txt racecheck.log 100
sanitize memcheck q42 experiments/session42/sanitize_fp8.txt memcheck.log 70
cd $R && tar czf $OUT/res8.tgz . && echo "end: $(smi)"
