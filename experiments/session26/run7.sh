#!/usr/bin/env bash
# Session 26, call 8: the whole GPU test binary (what ctest -L gpu runs) on the final code, its kbench
# (built without FlashInfer, as the tests expect) and the fault probe at their build paths.
source "$(dirname "$0")/../session25/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack build/carry/side.xz /work/main/build/src/app/kbench
unpack build/carry_keep/fault_probe.xz /work/main/build/tests/kbench_fault_probe
timeout 480 /tmp/b/gt >"$OUT/gtest_all.log" 2>&1
echo "gtest all exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran|DISABLED' "$OUT/gtest_all.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_all.log" | head
echo "end: $(smi)"
