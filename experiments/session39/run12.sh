#!/usr/bin/env bash
# Session 39, call 12 (H200): s5 (the transposed kernel with five raw slots, the merge half of the dims
# at a time) against gth (four slots: the landed kernel; its page-TMA knob unset), three rounds, the
# order swapped each round; s5's MLA GPU tests; compute-sanitizer racecheck / memcheck on the
# transposed kernel's cases. Carry .ab/bin and build/carry.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res12; rm -rf $R; mkdir -p $R/mla/ab
unpack_all s5
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session39/s5_ab.txt
run_as s4 1 gth; run_as s5 1 s5; run_as s5 2 s5; run_as s4 2 gth; run_as s4 3 gth; run_as s5 3 s5
gtests gtest_mla.log 150 '*Mla*'
sanitize racecheck s5 experiments/session33/sanitize_mla.txt racecheck.log 100
sanitize memcheck s5 experiments/session33/sanitize_mla.txt memcheck.log 60
finish 12
