#!/usr/bin/env bash
# Session 34, call 6 (H200): the launch helpers' refactor (launch.hpp: ensure_smem_limit<kernel>,
# memo_per_device; every family's launch path): the whole GPU test binary, with kbench and the fault
# probe at their build paths.
source "$(dirname "$0")/../session25/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
unpack .ab/bin/s34f.xz /work/main/build/src/app/kbench
timeout 560 /tmp/b/gt >"$OUT/gtest_all.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran' "$OUT/gtest_all.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_all.log" | head -20
echo "end: $(smi)"
