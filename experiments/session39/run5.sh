#!/usr/bin/env bash
# Session 39, call 5 (H200): the final code (g2 = 01f3424's kbench): the whole GPU test binary, then
# FlashInfer's sample testlist unchanged with --refcheck (build/carry/peer.txt). Carry .ab/bin and
# build/carry (GPU tests, fault probe, peer list).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
R=/tmp/res5; rm -rf $R; mkdir -p $R/peer
unpack_all g2
unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
gtests gtest_all.log 380
grep -E "ms total\)$" $R/gtest_all.log | tail -1
timeout 190 /tmp/b/g2 --testlist build/carry/peer.txt --refcheck --output_path "$R/peer/peer.csv" >"$R/peer/peer.log" 2>&1
echo "peer exit $?: $(grep -E 'Testlist summary|\] Backends:' "$R/peer/peer.log" | tail -3 | tr '\n' ' ')"
grep -E '^\[ERROR\]' "$R/peer/peer.log" | head -20
tar czf "$OUT/results5.tgz" -C "$R" .
echo "end: $(smi)"
