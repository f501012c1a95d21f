#!/usr/bin/env bash
# Session 38, call 2 (H200): the seesaw's part-wise stage freeing, refined. A/B of main (d8e547c),
# parts (call 1's), p4 (kpe freed by one lane of each of the owner's warps, not all 128 threads) and
# p4po (p4, with S and the loads taking the other warpgroup's V half before the owner's), two rounds,
# beside FlashInfer's MLA kernels (run by main). Carry .ab/bin.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res2; rm -rf $R; mkdir -p $R/mla/ab
unpack_bins
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session38/mla_ab.txt
for b in main parts p4 p4po; do run_as $b 1 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 1 main
list=experiments/session38/mla_ab.txt
for b in p4po p4 parts main; do run_as $b 2 $b; done
finish 2
