#!/usr/bin/env bash
# Session 44, call 10 (H200): sb2, the landed code (the bf16 transposed kernel's segment cost 3.2 tiles
# where pages hold whole tiles, the default's 2 where tiles are gathered): its MLA GPU tests, and
# fused_merge_44.txt twice, every row refchecked.
source "$(dirname "$0")/steps.sh"
R=$OUT/res10; mkdir -p $R
unpack_all sb2
gtests gtest_mla.log 150 '*Mla*'
rotate experiments/session44/fused_merge_44.txt 90 "sb2" "sb2"
finish 10
