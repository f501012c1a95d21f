#!/usr/bin/env bash
# Session 36, call 5 (H200): rel_ab.txt with main, rel (groupwise stages released by lane 0 of
# each consumer warp) and rel forced into 128 x 128 tiles in clusters of 2 (rel128), 2 rounds in turn;
# compute-sanitizer (racecheck first) on rel in 128 x 256 and 128 x 128 tiles.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/steps.sh"
R=/tmp/res5; rm -rf $R; mkdir -p $R/t128/ab
unpack_bins
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
list=experiments/session36/rel_ab.txt
AB=$R/t128/ab RUN_LIMIT=150
for r in 1 2; do
  run_as main $r main
  run_as rel $r rel
  run_as rel128 $r rel KBENCH_WGMMA_GEMM_TILES=128x128 KBENCH_WGMMA_GEMM_CLUSTER=2
done
kill $dmon
for tool in racecheck memcheck; do
  sanitize $tool rel experiments/session36/sanitize_gw.txt ${tool}_128x256.log 45 KBENCH_WGMMA_GEMM_TILES=128x256
  sanitize $tool rel experiments/session36/sanitize_gw.txt ${tool}_128x128c2.log 45 KBENCH_WGMMA_GEMM_TILES=128x128 KBENCH_WGMMA_GEMM_CLUSTER=2
done
finish 5
