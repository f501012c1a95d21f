#!/usr/bin/env bash
# Session 34 (H200): gpu_tests_call.sh BINARY -- the whole GPU test binary (build/carry/gpu_tests.xz) with
# .ab/bin/BINARY.xz as kbench and the fault probe (build/carry/fault_probe.xz) at their build paths.
source "$(dirname "$0")/../session25/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
unpack ".ab/bin/$1.xz" /work/main/build/src/app/kbench
timeout 560 /tmp/b/gt >"$OUT/gtest_all.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran' "$OUT/gtest_all.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_all.log" | head -20
echo "end: $(smi)"
