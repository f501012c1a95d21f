#!/usr/bin/env bash
# Session 38, call 3 (H200): p4 (the seesaw's stage freed part by part, kpe by a lane of each of the
# owner's warps) for landing: A/B of main (d8e547c), p4 and p4n (p4 with fp8 tiles' S in chunk order
# 0..8), two rounds, beside FlashInfer's MLA kernels (run by main); issue 19's targets list with p4;
# p4's MLA GPU tests and compute-sanitizer racecheck / memcheck on the seesaw cases. Carry .ab/bin and
# build/carry (p4's GPU tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res3; rm -rf $R; mkdir -p $R/mla/ab
unpack_all p4
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session38/mla_ab.txt
for b in main p4 p4n; do run_as $b 1 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 1 main
list=experiments/session38/mla_ab.txt
for b in p4n p4 main; do run_as $b 2 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 2 main
echo "after ab: $(smi)"
timeout 150 /tmp/b/p4 --testlist bench/attention/mla/mla_targets.txt --output_path $R/mla_targets.csv -v >$R/mla_targets.log 2>&1
echo "targets exit $?: $(grep -c ',passed,' $R/mla_targets.csv) passed rows; after: $(smi)"
gtests gtest_mla.log 150 '*Mla*'
sanitize racecheck p4 experiments/session38/sanitize_seesaw.txt racecheck.log 100
sanitize memcheck p4 experiments/session38/sanitize_seesaw.txt memcheck.log 60
finish 3
