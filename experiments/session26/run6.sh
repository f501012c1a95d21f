#!/usr/bin/env bash
# Session 26, call 7: the compute-bound MLA case and the random-length 2- and 4-token cases, fa3 and
# flashinfer_fa3 alternating in both orders (compute_repeats.txt), the FlashInfer build of the final
# code: the spread of the power-capped clock between rows of one run.
source "$(dirname "$0")/../session25/common.sh"
xz -dc .ab/bin/fi.xz >/tmp/b/fi && chmod +x /tmp/b/fi
/tmp/b/fi --testlist experiments/session26/compute_repeats.txt --output_path "$OUT/compute_repeats.csv" >"$OUT/compute_repeats.log" 2>&1
echo "exit $?"; grep -E '^\[PERF\]|Backends|WARNING' "$OUT/compute_repeats.log" | cut -c1-150
echo "end: $(smi)"
