#!/usr/bin/env bash
# Session 40, call 11 (H200): the code to land (f40: fa3's transposed kernel for bf16 KV, its tensor
# maps at 128 B L2 promotion) against main (3b2ebc2) on final_ab.txt, two rounds, order swapped; the
# MLA GPU tests; racecheck and memcheck on sanitize_bf16.txt. Results straight into $OUT.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res11; mkdir -p $R/mla/ab
unpack_all f40
gtests gtest_mla.log 60 '*Mla*'
AB=$R/mla/ab RUN_LIMIT=30
list=experiments/session40/final_ab.txt
run_as main 1 main; run_as f40 1 f40; run_as f40 2 f40; run_as main 2 main
python3 experiments/session35/table.py $R/mla/ab
sanitize racecheck f40 experiments/session40/sanitize_bf16.txt racecheck.log 45
sanitize memcheck f40 experiments/session40/sanitize_bf16.txt memcheck.log 30
echo "end: $(smi)"
