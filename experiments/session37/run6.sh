#!/usr/bin/env bash
# Session 37, call 6 (H200): cl (uh plus groupwise_ring_token.patch: the groupwise consumer keeps its
# ring position without division and tries the next slice's full barrier before promoting, as
# CUTLASS's blockwise mainloop does) against uh (e6d0f9f): gw_ab.txt 2 rounds in turn, moe_ab.txt once;
# the GEMM and MoE GPU tests and memcheck / racecheck (groupwise cases, 128 x 128 and 128 x 256) on
# cl. Carry .ab/bin and build/carry (cl's GPU tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res6; rm -rf $R; mkdir -p $R/gw/ab $R/moe/ab
unpack_all cl
list=experiments/session37/gw_ab.txt AB=$R/gw/ab RUN_LIMIT=90
for r in 1 2; do for b in uh cl; do run_as $b $r $b; done; done
list=experiments/session37/moe_ab.txt AB=$R/moe/ab RUN_LIMIT=90
for b in uh cl; do run_as $b 1 $b; done
gtests gtest.log 200 '*Gemm*:*Moe*:-MoeA2a*:MoeCommA2a*'
for tool in racecheck memcheck; do
  sanitize $tool cl experiments/session36/sanitize_gw.txt ${tool}_gw128.log 60 KBENCH_WGMMA_GEMM_TILES=128x128
  sanitize $tool cl experiments/session36/sanitize_gw.txt ${tool}_gw256.log 60 KBENCH_WGMMA_GEMM_TILES=128x256 KBENCH_WGMMA_GEMM_CLUSTER=2
done
finish 6
