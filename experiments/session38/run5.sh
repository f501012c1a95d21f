#!/usr/bin/env bash
# Session 38, call 5 (H200): pvf (the landed p4, its seesaw consumers issuing the other warpgroup's PV
# of tile - 1 before S(tile), so that tile - 1's half frees before S(tile) waits for anything). A/B of
# main (d8e547c), p4 (7139cfa) and pvf, two rounds, beside FlashInfer's MLA kernels (run by main);
# pvf's MLA GPU tests and compute-sanitizer racecheck / memcheck on the seesaw cases. Carry .ab/bin and
# build/carry (pvf's GPU tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res5; rm -rf $R; mkdir -p $R/mla/ab
unpack_all pvf
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session38/mla_ab.txt
for b in main p4 pvf; do run_as $b 1 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 1 main
list=experiments/session38/mla_ab.txt
for b in pvf p4 main; do run_as $b 2 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 2 main
echo "after ab: $(smi)"
gtests gtest_mla.log 150 '*Mla*'
sanitize racecheck pvf experiments/session38/sanitize_seesaw.txt racecheck.log 100
sanitize memcheck pvf experiments/session38/sanitize_seesaw.txt memcheck.log 60
finish 5
