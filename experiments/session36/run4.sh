#!/usr/bin/env bash
# Session 36, call 4 (H200): t128_ab.txt with main and with t128 (main plus a 128 x 128 groupwise
# tile) forced into 128 x 128 tiles, in clusters of 2 (t128c2) and without (t128c1), 2 rounds in
# turn; compute-sanitizer on the groupwise lines in 128 x 128 tiles.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/steps.sh"
R=/tmp/res4; rm -rf $R; mkdir -p $R/t128/ab
unpack_bins
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
list=experiments/session36/t128_ab.txt
AB=$R/t128/ab RUN_LIMIT=150
for r in 1 2; do
  run_as main $r main
  run_as t128c2 $r t128 KBENCH_WGMMA_GEMM_TILES=128x128 KBENCH_WGMMA_GEMM_CLUSTER=2
  run_as t128c1 $r t128 KBENCH_WGMMA_GEMM_TILES=128x128 KBENCH_WGMMA_GEMM_CLUSTER=1
done
kill $dmon
for tool in memcheck racecheck; do
  sanitize $tool t128 experiments/session36/sanitize_gw.txt ${tool}_128x128c2.log 45 KBENCH_WGMMA_GEMM_TILES=128x128 KBENCH_WGMMA_GEMM_CLUSTER=2
done
finish 4
