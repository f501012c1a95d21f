#!/usr/bin/env bash
# Session 35, call 7 (H200): FlashInfer's whole sample testlist (../shared/peer/, carried as
# build/carry/peer.txt), unchanged, every case refchecked, on the landed build (.ab/bin/final.xz).
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/final.xz /tmp/b/final
timeout 150 /tmp/b/final --testlist build/carry/peer.txt --refcheck --output_path "$OUT/peer.csv" >"$OUT/peer.log" 2>&1
echo "peer exit $?: $(grep -E 'Testlist summary|\] Backends:' "$OUT/peer.log" | tr '\n' ' ')"
grep -E '^\[ERROR\]' "$OUT/peer.log" | head -20
echo "end: $(smi)"
