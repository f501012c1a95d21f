#!/usr/bin/env bash
# Session 37, call 8 (H200): uh (e6d0f9f) on decode_sweep.txt in 64 x 128 and 128 x 128 tiles with
# KBENCH_WGMMA_GEMM_SPLITS 1-8 (the heuristic: 64 x 128 at m 64 and n 2112, 128 x 128 at m 128, n
# 7168; 5, 3, 2 and 2 splits on the H200), and decode_ab.txt once more beside cuBLASLt. Carry .ab/bin.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res8; rm -rf $R; mkdir -p $R/sweep/ab $R/decode/ab
unpack_bins
list=experiments/session37/decode_sweep.txt AB=$R/sweep/ab RUN_LIMIT=40
for tiles in 64x128 128x128; do
  for s in 1 2 3 4 5 6 8; do run_as t${tiles%%x*}s$s 1 uh KBENCH_WGMMA_GEMM_TILES=$tiles KBENCH_WGMMA_GEMM_SPLITS=$s; done
done
list=experiments/session37/decode_ab.txt AB=$R/decode/ab RUN_LIMIT=60
run_as uh 1 uh
finish 8
