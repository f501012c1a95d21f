#!/usr/bin/env bash
# Session 42, call 1 (H200): m42 (= main's kernels, session 41's fc41) against n42 (the fp8 transposed
# kernel stages Q^T from q rows bulk-copied into shared memory as a segment opens) on fp8_42.txt,
# two rounds; the MLA GPU tests (n42); racecheck / memcheck of the fp8 transposed lines.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res1; mkdir -p $R/ab
unpack_all n42
AB=$R/ab RUN_LIMIT=70 list=experiments/session42/fp8_42.txt
for r in 1 2; do run_as m42 $r fc41; run_as n42 $r n42; done
python3 experiments/session35/table.py $R/ab
gtests gtest_mla.log 80 '*Mla*'
sanitize racecheck n42 experiments/session42/sanitize_fp8.txt racecheck.log 100
sanitize memcheck n42 experiments/session42/sanitize_fp8.txt memcheck.log 70
cd $R && tar czf $OUT/res1.tgz . && echo "end: $(smi)"
