#!/usr/bin/env bash
# Session 40, call 12 (H200): f40 ran past call 11's 30 s limit on the random-length row (r40, with
# 256 B promotion, ran it in call 5). The row alone: direct launches (-n 3), then CUDA graphs; log tails.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
unpack_bins
L=experiments/session40/random_len.txt
sed 's/--case_tag/--no_cuda_graph -n 3 -d 1 --case_tag/' $L > /tmp/direct.txt
timeout 20 /tmp/b/f40 --testlist /tmp/direct.txt > $OUT/direct.log 2>&1; echo "direct exit $?"; tail -5 $OUT/direct.log
timeout 25 /tmp/b/f40 --testlist $L > $OUT/graph.log 2>&1; echo "graph exit $?"; tail -5 $OUT/graph.log
echo "end: $(smi)"
