#!/usr/bin/env bash
# Session 38, call 1 (H200): fa3's seesaw with its stage freed part by part. A/B of main (d8e547c),
# parts (kpe / V halves freed apart, S taking kpe, the own half, the other's) and split (parts, and the
# other warpgroup's PV between the halves of S), two rounds, beside FlashInfer's MLA kernels (run by
# main); then split's MLA GPU tests and compute-sanitizer racecheck / memcheck on its seesaw cases.
# Carry .ab/bin and build/carry (split's GPU tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res1; rm -rf $R; mkdir -p $R/mla/ab
unpack_all split
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session38/mla_ab.txt
for b in main parts split; do run_as $b 1 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 1 main
list=experiments/session38/mla_ab.txt
for b in split parts main; do run_as $b 2 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 2 main
echo "after ab: $(smi)"
gtests gtest_mla.log 150 '*Mla*'
sanitize racecheck split experiments/session38/sanitize_seesaw.txt racecheck.log 100
sanitize memcheck split experiments/session38/sanitize_seesaw.txt memcheck.log 60
finish 1
