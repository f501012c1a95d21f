#!/usr/bin/env bash
# Session 42, call 12 (H200): f42 (32c4615), ba42 (f42 + the bf16 transposed kernel's next segment's q
# rows prefetched into L2 once a segment's first tile is on its way) and bab42 (ba42 + a later
# segment's Q^T staged after its first two tiles, session 41's q_after_two_tiles) on bf16_42.txt,
# three rounds in a rotating order.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res12; mkdir -p $R/ab
unpack_bins
AB=$R/ab RUN_LIMIT=70 list=experiments/session42/bf16_42.txt
run_as f42 1 f42; run_as ba42 1 ba42; run_as bab42 1 bab42
run_as ba42 2 ba42; run_as bab42 2 bab42; run_as f42 2 f42
run_as bab42 3 bab42; run_as f42 3 f42; run_as ba42 3 ba42
python3 experiments/session35/table.py $R/ab
cd $R && tar czf $OUT/res12.tgz . && echo "end: $(smi)"
