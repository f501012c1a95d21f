#!/usr/bin/env bash
# Session 39, call 7 (H200): the memory-bound case on fa3's uniform grid and on the balanced schedule
# forced (KBENCH_MLA_SCHEDULE=balanced), three rounds alternating, FlashInfer's fa3 in each row.
# Carry .ab/bin (sch: the landed code plus the override).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res7; rm -rf $R; mkdir -p $R/mla/ab
unpack_bins
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session39/sched_ab.txt
for r in 1 2 3; do run_as uniform $r sch; run_as balanced $r sch KBENCH_MLA_SCHEDULE=balanced; done
finish 7
