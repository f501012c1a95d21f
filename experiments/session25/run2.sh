#!/usr/bin/env bash
# Session 25, call 2: the whole GPU test binary (what ctest -L gpu runs) and racecheck on small lines.
source "$(dirname "$0")/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/s25.xz /work/main/build/src/app/kbench
for tool in racecheck memcheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 /work/main/build/src/app/kbench --testlist experiments/session25/racecheck.txt >"$OUT/$tool.log" 2>&1
  echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tail -1) $(grep -E 'Backends:' "$OUT/$tool.log" | tail -1)"
done
timeout 400 /tmp/b/gt --gtest_filter="${GTEST_FILTER:-*}" >"$OUT/gtest.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran|DISABLED' "$OUT/gtest.log" | tr '\n' ' ')"; grep -E '^\[  FAILED' "$OUT/gtest.log" | head -20
echo "end: $(smi)"
