#!/usr/bin/env bash
# Session 39, call 13 (H200): the reviewed code (298d03b: same SASS for the transposed kernel, a renamed
# template parameter): the GEMM and MLA GPU tests and racecheck on the transposed kernel's cases.
# Carry .ab/bin and build/carry.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
R=/tmp/res13; rm -rf $R; mkdir -p $R
unpack_all final39
gtests gtest_gemm_mla.log 200 'KbenchGemm*:*Mla*:-KbenchGemmFp4*'
sanitize racecheck final39 experiments/session33/sanitize_mla.txt racecheck_mla.log 100
tar czf "$OUT/results13.tgz" -C "$R" .
echo "end: $(smi)"
