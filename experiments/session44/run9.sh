#!/usr/bin/env bash
# Session 44, call 9 (H200): main (m44c) against sb (the bf16 transposed kernel's segment cost in the
# plan at 3.2 tiles, call 8's trace, instead of the default's 2) on fused_merge_44.txt, four rounds in
# rotation; sb's MLA GPU tests.
source "$(dirname "$0")/steps.sh"
R=$OUT/res9; mkdir -p $R
unpack_all sb
gtests gtest_mla.log 150 '*Mla*'
rotate experiments/session44/fused_merge_44.txt 90 "m44c sb" "sb m44c" "m44c sb" "sb m44c"
finish 9
