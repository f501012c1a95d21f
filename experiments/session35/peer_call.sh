#!/usr/bin/env bash
# Session 35's peer calls (H200): peer_call.sh TESTLIST NAME LIMIT -- TESTLIST (lines of FlashInfer's
# sample testlist, unchanged), every case refchecked, on the landed build (.ab/bin/final.xz), at most
# LIMIT seconds; $OUT/NAME.csv and $OUT/NAME.log.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/final.xz /tmp/b/final
timeout "$3" /tmp/b/final --testlist "$1" --refcheck --output_path "$OUT/$2.csv" >"$OUT/$2.log" 2>&1
echo "peer exit $?: $(grep -E 'Testlist summary|\] Backends:' "$OUT/$2.log" | tr '\n' ' ')"
grep -E '^\[ERROR\]' "$OUT/$2.log" | head -20
echo "end: $(smi)"
