#!/usr/bin/env bash
# Session 44, call 6 (H200): main (c02e32d) with this session's test change (f44, built without
# FlashInfer: its lines skip): the whole GPU test binary, then FlashInfer's sample testlist unchanged
# with --refcheck. Carry .ab/bin and build/carry.
source "$(dirname "$0")/steps.sh"
R=$OUT/res6; mkdir -p $R
verify f44
cd $R && tar czf $OUT/res6.tgz . && echo "end: $(smi)"
