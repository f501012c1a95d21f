#!/usr/bin/env bash
# Session 37, call 9 (H200): sm (uh plus the tile rule for groups of <= 64 rows) against uh on
# bmm_ab.txt, 2 rounds in turn; the GEMM GPU tests on sm. Carry .ab/bin and build/carry (sm's tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res9; rm -rf $R; mkdir -p $R/bmm/ab
unpack_all sm
list=experiments/session37/bmm_ab.txt AB=$R/bmm/ab RUN_LIMIT=60
for r in 1 2; do for b in uh sm; do run_as $b $r $b; done; done
gtests gtest.log 150 'KbenchGemm*:*Cublas*:*Cudnn*'
finish 9
