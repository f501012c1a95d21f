#!/usr/bin/env bash
# Session 42, call 14 (H200): t42 (call 13's, landed): the MLA GPU tests, racecheck and memcheck of
# the fp8 transposed kernel's lines.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
R=$OUT/res14; mkdir -p $R
unpack_all t42
gtests gtest_mla.log 80 '*Mla*'
sanitize racecheck t42 experiments/session42/sanitize_fp8.txt racecheck.log 80
sanitize memcheck t42 experiments/session42/sanitize_fp8.txt memcheck.log 60
cd $R && tar czf $OUT/res14.tgz . && echo "end: $(smi)"
