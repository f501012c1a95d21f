#!/usr/bin/env bash
# Session 39, call 2 (H200): vt (fa3's transposed kernel reading V^T's fragments from the raw tile by
# ldmatrix.trans; plus 869b59e) against main, three rounds; vt's MLA GPU tests; compute-sanitizer
# racecheck / memcheck on the transposed kernel's cases. Carry .ab/bin and build/carry.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res2; rm -rf $R; mkdir -p $R/mla/ab
unpack_all vt
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session39/vt_ab.txt
for r in 1 2 3; do for b in main vt; do run_as $b $r $b; done; done
echo "after ab: $(smi)"
gtests gtest_mla.log 150 '*Mla*'
sanitize racecheck vt experiments/session33/sanitize_mla.txt racecheck.log 100
sanitize memcheck vt experiments/session33/sanitize_mla.txt memcheck.log 60
finish 2
