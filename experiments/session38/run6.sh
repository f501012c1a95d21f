#!/usr/bin/env bash
# Session 38, call 6 (H200): spf (p4, and fp8 KV on its own seesaw variant, seesaw_fp8, which issues
# the other warpgroup's PV of tile - 1 before its widening and S(tile): call 5's pv_first_all.patch
# order for fp8 only). A/B of main (d8e547c), p4 (7139cfa) and spf, two rounds, beside FlashInfer's
# MLA kernels (run by main);
# spf's MLA GPU tests and compute-sanitizer racecheck / memcheck on the seesaw cases. Carry .ab/bin and
# build/carry (spf's GPU tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res6; rm -rf $R; mkdir -p $R/mla/ab
unpack_all spf
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session38/mla_ab.txt
for b in main p4 spf; do run_as $b 1 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 1 main
list=experiments/session38/mla_ab.txt
for b in spf p4 main; do run_as $b 2 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 2 main
echo "after ab: $(smi)"
gtests gtest_mla.log 150 '*Mla*'
sanitize racecheck spf experiments/session38/sanitize_seesaw.txt racecheck.log 100
sanitize memcheck spf experiments/session38/sanitize_seesaw.txt memcheck.log 60
finish 6
