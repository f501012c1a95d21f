#!/usr/bin/env bash
# Session 38, call 9 (H200): the whole GPU test binary (fault probe included) on the session's final
# code (38b5b27: the seesaw's part-wise stage, seesaw_fp8), kbench at its build path. Carry .ab/bin
# (fin = kbench) and build/carry (the GPU tests and the fault probe, xz).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
R=/tmp/res9; rm -rf $R; mkdir -p $R
unpack_all fin
unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
gtests gtest_all.log 400
grep -E "ms total\)$" $R/gtest_all.log | tail -1
grep -c "^\[  SKIPPED" $R/gtest_all.log
tar czf "$OUT/results9.tgz" -C "$R" .
echo "end: $(smi)"
