#!/usr/bin/env bash
# Session 39, call 3 (H200): fin39 (the double-buffered groupwise loop where 128 x 128 tiles fill the
# SMs, else main's; fa3's transposed kernel reading V^T by ldmatrix.trans) against main on the GEMM
# rows, two rounds; issue 19's MLA list with fin39, twice; the GEMM and MLA GPU tests;
# compute-sanitizer on the double-buffered loop (128 x 128 tiles forced) and main's loop in them.
# Carry .ab/bin and build/carry.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res3; rm -rf $R; mkdir -p $R/gemm/ab $R/mla
unpack_all fin39
AB=$R/gemm/ab RUN_LIMIT=120
list=experiments/session39/db_ab.txt
for r in 1 2; do for b in main fin39; do run_as $b $r $b; done; done
echo "after gemm ab: $(smi)"
for r in 1 2; do
  timeout 150 /tmp/b/fin39 --testlist bench/attention/mla/mla_targets.txt --output_path $R/mla/mla_targets_$r.csv >$R/mla/mla_targets_$r.log 2>&1
  echo "mla targets $r exit $?: $(grep -c ',passed,' $R/mla/mla_targets_$r.csv) passed rows; after: $(smi)"
done
gtests gtest_gemm_mla.log 200 'KbenchGemm*:*Mla*:-KbenchGemmFp4*'
sanitize racecheck fin39 experiments/session39/sanitize_db.txt racecheck_db.log 100 KBENCH_WGMMA_GEMM_TILES=128x128
sanitize memcheck fin39 experiments/session39/sanitize_db.txt memcheck_db.log 60 KBENCH_WGMMA_GEMM_TILES=128x128
sanitize racecheck fin39 experiments/session36/sanitize_gw.txt racecheck_gw.log 100 KBENCH_WGMMA_GEMM_TILES=128x128
finish 3
