#!/usr/bin/env bash
# Session 44, call 5 (H200): m44 (main) against wc (call 4's look-ahead in the fp8 transposed kernel's
# consumers only, the producers as main: wk and wk2 spilled the producers' 56 registers) on
# fused_merge_44.txt, four rounds in rotation.
source "$(dirname "$0")/steps.sh"
R=$OUT/res5; mkdir -p $R
unpack_bins
rotate experiments/session44/fused_merge_44.txt 90 "m44 wc" "wc m44" "m44 wc" "wc m44"
finish 5
