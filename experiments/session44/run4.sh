#!/usr/bin/env bash
# Session 44, call 4 (H200): m44 (main) against wk (the fp8 transposed kernel's segments looked up a
# segment ahead: SegmentWalk, the next entry two segments ahead) and wk2 (the same, the next entry
# loaded as the segment before opens) on fused_merge_44.txt, three rounds in rotation.
source "$(dirname "$0")/steps.sh"
R=$OUT/res4; mkdir -p $R
unpack_bins
rotate experiments/session44/fused_merge_44.txt 90 "m44 wk wk2" "wk wk2 m44" "wk2 m44 wk"
finish 4
