#!/usr/bin/env bash
# Session 39, call 1 (H200): db (double-buffered groupwise temporaries in 128 x 128 tiles) against
# main, two rounds, in the heuristic's tiles and with 128 x 128 forced; db's GEMM GPU tests;
# compute-sanitizer racecheck / memcheck on the groupwise cases in 128 x 128 tiles. Carry .ab/bin and
# build/carry (db's GPU tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res1; rm -rf $R; mkdir -p $R/heur/ab $R/t128/ab
unpack_all db
list=experiments/session39/db_ab.txt RUN_LIMIT=120
for r in 1 2; do
  for b in main db; do AB=$R/heur/ab run_as $b $r $b; AB=$R/t128/ab run_as $b $r $b KBENCH_WGMMA_GEMM_TILES=128x128; done
done
echo "after ab: $(smi)"
gtests gtest_gemm.log 150 'KbenchGemm*:-KbenchGemmFp4*'
sanitize racecheck db experiments/session36/sanitize_gw.txt racecheck_128.log 100 KBENCH_WGMMA_GEMM_TILES=128x128
sanitize memcheck db experiments/session36/sanitize_gw.txt memcheck_128.log 60 KBENCH_WGMMA_GEMM_TILES=128x128
finish 1
