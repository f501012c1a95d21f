#!/usr/bin/env bash
# Session 38, call 10 (H200): FlashInfer's sample testlist, unchanged (build/carry/peer.txt, a copy of
# ../shared/peer/flashinfer_sample_testlist.txt), every case refchecked, on fin (38b5b27's kernels:
# the session's MLA seesaw). Carry .ab/bin and build/carry.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/fin.xz /work/main/build/src/app/kbench
timeout 330 /work/main/build/src/app/kbench --testlist build/carry/peer.txt --refcheck \
  --output_path "$OUT/peer.csv" >"$OUT/peer.log" 2>&1
echo "peer exit $?: $(grep -E 'Testlist summary|\] Backends:' "$OUT/peer.log" | tail -3 | tr '\n' ' ')"
grep -E '^\[ERROR\]' "$OUT/peer.log" | head -20
echo "end: $(smi)"
