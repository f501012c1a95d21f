#!/usr/bin/env bash
# Session 36, call 7 (H200): nt (t128b whose 128 x 128 groupwise tiles do not take turns: call 6's
# Nsight Compute had kbench's warps 44% of their stalls at a named barrier in those tiles) against
# main and t128b on tiles_ab.txt (the heuristic's picks), and t128b / nt forced into 128 x 128 tiles on
# the 4096 x 7168 x 16384 line, 2 rounds in turn.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/steps.sh"
R=/tmp/res7; rm -rf $R; mkdir -p $R/t128/ab
unpack_bins
list=experiments/session36/tiles_ab.txt
AB=$R/t128/ab RUN_LIMIT=100
for r in 1 2; do
  run_as main $r main
  run_as t128b $r t128b
  run_as nt $r nt
  run_as t128bF $r t128b KBENCH_WGMMA_GEMM_TILES=128x128
  run_as ntF $r nt KBENCH_WGMMA_GEMM_TILES=128x128
done
finish 7
