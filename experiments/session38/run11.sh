#!/usr/bin/env bash
# Session 38, call 11 (H200): spl (the landed fin, its bf16 seesaw issuing the other warpgroup's PV
# between S(tile)'s first five chunks, kpe and the own half, and its last four, the other half, which
# free last; call 1's split on today's code). A/B of fin and spl, two rounds, FlashInfer's MLA kernels
# by fin between them; spl's MLA GPU tests and compute-sanitizer racecheck / memcheck on the seesaw
# cases. Carry .ab/bin and build/carry (spl's GPU tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res11; rm -rf $R; mkdir -p $R/mla/ab
unpack_all spl
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session38/mla_ab.txt
for b in fin spl; do run_as $b 1 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 1 fin
list=experiments/session38/mla_ab.txt
for b in spl fin; do run_as $b 2 $b; done
gtests gtest_mla.log 150 '*Mla*'
sanitize racecheck spl experiments/session38/sanitize_seesaw.txt racecheck.log 100
sanitize memcheck spl experiments/session38/sanitize_seesaw.txt memcheck.log 60
finish 11
