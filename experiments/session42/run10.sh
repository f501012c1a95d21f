#!/usr/bin/env bash
# Session 42, call 10 (H200): the final code (f42 = 32c4615): the whole GPU test binary, then
# FlashInfer's sample testlist unchanged with --refcheck (build/carry/peer.txt). Carry .ab/bin and
# build/carry.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
R=$OUT/res10; mkdir -p $R/peer
unpack_all f42
unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
gtests gtest_all.log 280
grep -E "ms total\)$" $R/gtest_all.log | tail -1
timeout 200 /tmp/b/f42 --testlist build/carry/peer.txt --refcheck --output_path "$R/peer/peer.csv" >"$R/peer/peer.log" 2>&1
echo "peer exit $?: $(grep -E 'Testlist summary|\] Backends:' "$R/peer/peer.log" | tail -3 | tr '\n' ' ')"
grep -E '^\[ERROR\]' "$R/peer/peer.log" | head -20
cd $R && tar czf $OUT/res10.tgz . && echo "end: $(smi)"
