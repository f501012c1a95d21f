#!/usr/bin/env bash
# Session 44, call 2 (H200): m44 (main) against el2 (main + the fp8 transposed kernel's early / late
# warpgroups at a segment's end, the column sums in a half a segment parity: call 1's el44 without the
# split merge in the kernel, its racecheck hazards fixed) on fused_merge_44.txt, four rounds in
# rotation; el2's MLA GPU tests; racecheck and memcheck of sanitize_44.txt with el2.
source "$(dirname "$0")/steps.sh"
R=$OUT/res2; mkdir -p $R
unpack_all el2
gtests gtest_mla.log 150 '*Mla*'
rotate experiments/session44/fused_merge_44.txt 90 "m44 el2" "el2 m44" "m44 el2" "el2 m44"
sanitize racecheck el2 experiments/session44/sanitize_44.txt racecheck.log 120
sanitize memcheck el2 experiments/session44/sanitize_44.txt memcheck.log 90
finish 2
