#!/usr/bin/env bash
# Session 41, call 5 (H200): fc41 (call 4's) against fq41 (fc41 + the bf16 transposed kernel staging a
# later segment's Q^T after its first two tiles) on rand41.txt, three rounds; the MLA GPU tests and
# racecheck / memcheck of the producers' lines with fq41.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res5; mkdir -p $R/ab
unpack_all fq41
AB=$R/ab RUN_LIMIT=30 list=experiments/session41/rand41.txt
for r in 1 2 3; do run_as fc41 $r fc41; run_as fq41 $r fq41; done
python3 experiments/session35/table.py $R/ab
gtests gtest_mla.log 80 '*Mla*'
sanitize racecheck fq41 experiments/session41/sanitize_producers.txt racecheck.log 130
sanitize memcheck fq41 experiments/session41/sanitize_producers.txt memcheck.log 90
cd $R && tar czf $OUT/res5.tgz . && echo "end: $(smi)"
