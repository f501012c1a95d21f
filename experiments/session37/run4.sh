#!/usr/bin/env bash
# Session 37, call 4 (H200): uh (the scale copier, the stage release mapped once, the decode tile
# heuristic) for landing: the GEMM and MoE GPU tests; compute-sanitizer memcheck and racecheck on the
# groupwise cases (128 x 128 and 128 x 256 tiles) and session 35's cases (per-tensor, bf16 in
# 128 x 256 clusters and 64 x 128 tiles); gw_ab.txt and moe_ab.txt with sc, uh and nopromo (a bound,
# not a kernel: uh promoting only each unit's last k-block, so its rows fail refcheck). Carry .ab/bin
# and build/carry (uh's GPU tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res4; rm -rf $R; mkdir -p $R/gw/ab $R/moe/ab
unpack_all uh
gtests gtest.log 200 '*Gemm*:*Moe*:-MoeA2a*:MoeCommA2a*'
for tool in racecheck memcheck; do
  sanitize $tool uh experiments/session36/sanitize_gw.txt ${tool}_gw128.log 60 KBENCH_WGMMA_GEMM_TILES=128x128
  sanitize $tool uh experiments/session36/sanitize_gw.txt ${tool}_gw256.log 60 KBENCH_WGMMA_GEMM_TILES=128x256 KBENCH_WGMMA_GEMM_CLUSTER=2
done
gemm_sanitizers uh
list=experiments/session37/gw_ab.txt AB=$R/gw/ab RUN_LIMIT=90
for b in sc uh nopromo; do run_as $b 1 $b; done
list=experiments/session37/moe_ab.txt AB=$R/moe/ab RUN_LIMIT=90
for b in sc uh; do run_as $b 1 $b; done
finish 4
