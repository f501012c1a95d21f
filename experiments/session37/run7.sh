#!/usr/bin/env bash
# Session 37, call 7 (H200): cl2 (uh plus groupwise_ring_test_wait.patch: call 6's ring position, the
# next slice's barrier probed by test_wait, which never suspends, instead of try_wait) against uh:
# gw_ab.txt, 2 rounds in turn. Carry .ab/bin.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res7; rm -rf $R; mkdir -p $R/gw/ab
unpack_bins
list=experiments/session37/gw_ab.txt AB=$R/gw/ab RUN_LIMIT=90
for r in 1 2; do for b in uh cl2; do run_as $b $r $b; done; done
finish 7
