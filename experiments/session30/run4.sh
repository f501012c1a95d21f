#!/usr/bin/env bash
# Session 30, call 4: FlashInfer's sample testlist, unchanged, every case refchecked, with the build
# that embeds sm_90a SASS only (every family's kernels found their image), clocks and power beside.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/new.xz /work/main/build/src/app/kbench
timeout 520 /work/main/build/src/app/kbench --testlist .deps/peer/flashinfer_sample_testlist.txt --refcheck \
  --output_path "$OUT/peer.csv" >"$OUT/peer.log" 2>&1
echo "peer exit $?: $(grep -E 'Testlist summary|\] Backends:' "$OUT/peer.log" | tr '\n' ' ')"
grep -E '^\[ERROR\]' "$OUT/peer.log" | head -20
echo "end: $(smi)"
