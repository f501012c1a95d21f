#!/usr/bin/env bash
# Session 25, call 8: L2 cache policies on the MLA KV tiles' TMA loads (evict_first, evict_last)
# against none (seesaw), the MLA A/B lines, two rounds in one call.
source "$(dirname "$0")/common.sh"
scripts/ab.sh run-bin experiments/session25/ab_mla.txt 2
grep -h "INFO\] line" "$OUT"/ab/*.log | grep -v "passed" | head -5
echo "end: $(smi)"
