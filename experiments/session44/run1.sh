#!/usr/bin/env bash
# Session 44, call 1 (H200): m44 (main, c02e32d), fm44 (split units of balanced plans merged in fa3's
# transposed kernels) and el44 (fm44 + the fp8 transposed kernel's early / late warpgroups at a segment's
# end) on fused_merge_44.txt, three rounds in rotation; el44's MLA GPU tests; racecheck and memcheck of
# sanitize_44.txt with el44.
source "$(dirname "$0")/steps.sh"
R=$OUT/res1; mkdir -p $R
unpack_all el44
gtests gtest_mla.log 150 '*Mla*'
rotate experiments/session44/fused_merge_44.txt 90 "m44 fm44 el44" "fm44 el44 m44" "el44 m44 fm44"
sanitize racecheck el44 experiments/session44/sanitize_44.txt racecheck.log 120
sanitize memcheck el44 experiments/session44/sanitize_44.txt memcheck.log 90
finish 1
