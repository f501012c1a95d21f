#!/usr/bin/env bash
# Session 37, call 11 (H200): fin (the consumer index passed as computed, without the shuffle that
# did not make ptxas keep descriptors in uniform registers) against sm (41e37b8) on gw_ab.txt and
# bmm_ab.txt, 2 rounds in turn; the GEMM and MoE GPU tests on fin. Carry .ab/bin and build/carry.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res11; rm -rf $R; mkdir -p $R/gw/ab $R/bmm/ab
unpack_all fin
list=experiments/session37/gw_ab.txt AB=$R/gw/ab RUN_LIMIT=60
for r in 1 2; do for b in sm fin; do run_as $b $r $b; done; done
list=experiments/session37/bmm_ab.txt AB=$R/bmm/ab RUN_LIMIT=60
for b in sm fin; do run_as $b 1 $b; done
gtests gtest.log 120 '*Gemm*:*Moe*:-MoeA2a*:MoeCommA2a*'
finish 11
