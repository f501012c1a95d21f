#!/usr/bin/env bash
# Session 36, call 3 (H200): main, gw6 and gw7 (gw_ab3.txt's header) on the groupwise GEMMs, 3 rounds
# in turn; the GEMM and MoE GPU tests and compute-sanitizer on gw7 (the GPU test binary is gw7's);
# DeepSeek-V3's FP8 MoE layer at 4096 tokens, 2 rounds.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
R=/tmp/res3; rm -rf $R; mkdir -p $R
unpack_all gw7
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
ab gw experiments/session36/gw_ab3.txt 3 300
grep deepseek_v3_moe_4096 experiments/session36/moe_ab.txt > $R/moe.txt
ab moe $R/moe.txt 2 150
kill $dmon
gtests gtest.log 120 '*Gemm*:*Moe*:-MoeA2a*:MoeCommA2a*:KbenchGemmFp4*'
for tool in memcheck racecheck; do
  sanitize $tool gw7 experiments/session36/sanitize_gw.txt ${tool}_128x256.log 45 KBENCH_WGMMA_GEMM_TILES=128x256
  sanitize $tool gw7 experiments/session36/sanitize_gw.txt ${tool}_64x128.log 45 KBENCH_WGMMA_GEMM_TILES=64x128 KBENCH_WGMMA_GEMM_CLUSTER=1
done
finish 3
