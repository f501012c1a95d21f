#!/usr/bin/env bash
# Session 36, call 1 (H200): main, gw1 and gw1s (experiments/session36/gw_ab.txt's header says what
# they are) on the groupwise GEMMs, 2 rounds in turn; the GEMM and MoE GPU tests and compute-sanitizer
# on gw1s (the GPU test binary is gw1s's); DeepSeek-V3's FP8 MoE layer, one round.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
R=/tmp/res1; rm -rf $R; mkdir -p $R
unpack_all gw1s
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
ab gw experiments/session36/gw_ab.txt 2 200
kill $dmon
gtests gtest.log 120 '*Gemm*:*Moe*:-MoeA2a*:MoeCommA2a*:KbenchGemmFp4*'
for tool in memcheck racecheck; do
  sanitize $tool gw1s experiments/session36/sanitize_gw.txt ${tool}_128x256.log 45 KBENCH_WGMMA_GEMM_TILES=128x256
  sanitize $tool gw1s experiments/session36/sanitize_gw.txt ${tool}_64x128.log 45 KBENCH_WGMMA_GEMM_TILES=64x128 KBENCH_WGMMA_GEMM_CLUSTER=1
done
ab moe experiments/session36/moe_ab.txt 1 120
finish 1
