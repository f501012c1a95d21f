#!/usr/bin/env bash
# Session 34, call 7 (H200): FlashInfer's sample testlist, unchanged, every case refchecked, on the
# final build (s34f: the launch helpers' refactor touches every family's launch path).
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/s34f.xz /work/main/build/src/app/kbench
timeout 560 /work/main/build/src/app/kbench --testlist .deps/peer/flashinfer_sample_testlist.txt --refcheck \
  --output_path "$OUT/peer.csv" >"$OUT/peer.log" 2>&1
echo "peer exit $?: $(grep -E 'Testlist summary|\] Backends:' "$OUT/peer.log" | tr '\n' ' ')"
grep -E '^\[ERROR\]' "$OUT/peer.log" | head -20
echo "end: $(smi)"
