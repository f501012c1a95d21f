#!/usr/bin/env bash
# Session 25, call 7: the whole GPU test binary (what ctest -L gpu runs) on the final code, kbench and
# the fault probe at their build paths.
source "$(dirname "$0")/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/seesaw.xz /work/main/build/src/app/kbench
unpack build/carry_keep/fault_probe.xz /work/main/build/tests/kbench_fault_probe
timeout 450 /tmp/b/gt >"$OUT/gtest_all.log" 2>&1
echo "gtest all exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran|DISABLED' "$OUT/gtest_all.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_all.log" | head
echo "end: $(smi)"
