#!/usr/bin/env bash
# Session 42, call 11 (H200): the landed code (f42 = 32c4615): its MLA rows (final42.txt, one run;
# FlashInfer beside the bf16 ones); racecheck of the fp8 transposed kernel's lines, memcheck of every
# fa3 producer's (session 41's list: the merge now launched with programmatic dependent launch).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res11; mkdir -p $R/final
unpack_bins
timeout 150 /tmp/b/f42 --testlist experiments/session42/final42.txt --output_path $R/final/final.csv >$R/final/final.log 2>&1; echo "final exit $?"
grep -E "^\[PERF\]|Backends:" $R/final/final.log
sanitize racecheck f42 experiments/session42/sanitize_fp8.txt racecheck.log 90
sanitize memcheck f42 experiments/session41/sanitize_producers.txt memcheck.log 120
cd $R && tar czf $OUT/res11.tgz . && echo "end: $(smi)"
