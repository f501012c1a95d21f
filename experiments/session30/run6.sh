#!/usr/bin/env bash
# Session 30, call 6 (review): the isolation tests (they need the fault probe, carried this time:
# with call 3's 490 this completes the GPU tests) and the decode kernel tests after a no-op edit of
# the decode plan.
source "$(dirname "$0")/../session25/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
unpack .ab/bin/new.xz /work/main/build/src/app/kbench
timeout 200 /tmp/b/gt --gtest_filter='Isolation.*:DecodeKernels.*' >"$OUT/gtest_isolation_decode.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_isolation_decode.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_isolation_decode.log" | head
echo "end: $(smi)"
