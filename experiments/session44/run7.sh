#!/usr/bin/env bash
# Session 44, call 7 (H200), a bound (experiment only): main (m44b, built again from c02e32d) against el2
# (call 2's early / late warpgroups) and elnq (el2 + bound_no_later_q_staging.patch: a CTA's later
# segments keep its first Q^T) on bounds_44.txt (no refcheck), three rounds in rotation: whether the
# segment boundary waits on both the Q^T staging and the merge of the warpgroups' halves.
source "$(dirname "$0")/steps.sh"
R=$OUT/res7; mkdir -p $R
unpack_bins
rotate experiments/session44/bounds_44.txt 60 "m44b el2 elnq" "el2 elnq m44b" "elnq m44b el2"
finish 7
