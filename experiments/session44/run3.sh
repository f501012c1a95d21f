#!/usr/bin/env bash
# Session 44, call 3 (H200), bounds (experiment only): main (m44) against builds that skip work, on
# bounds_44.txt (no refcheck), three rounds in rotation: nq (bound_no_later_q_staging.patch: a CTA's
# later segments keep its first Q^T, unstaged) and nk (bound_no_merge_kernel.patch: no split merge
# after the transposed kernels on balanced plans).
source "$(dirname "$0")/steps.sh"
R=$OUT/res3; mkdir -p $R
unpack_bins
rotate experiments/session44/bounds_44.txt 60 "m44 nq nk" "nq nk m44" "nk m44 nq"
finish 3
