#!/usr/bin/env bash
# Session 25, call 4: MLA fa3 on the seesaw schedule: MLA GPU tests, sanitizers, A/B against main.
source "$(dirname "$0")/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/seesaw.xz /work/main/build/src/app/kbench
timeout 200 /tmp/b/gt --gtest_filter='*Mla*' >"$OUT/gtest_mla.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_mla.log" | head -3 | tr '\n' ' ')"; grep -E '^\[  FAILED' "$OUT/gtest_mla.log" | head -20
for tool in racecheck memcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 /work/main/build/src/app/kbench --testlist experiments/session25/racecheck_mla.txt >"$OUT/$tool.log" 2>&1
  echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tail -1) $(grep -E 'Backends:' "$OUT/$tool.log" | tail -1)"
done
timeout 200 compute-sanitizer --tool racecheck --error-exitcode 99 /tmp/b/gt --gtest_filter='MlaFa3.Balanced*' >"$OUT/racecheck_balanced.log" 2>&1
echo "racecheck balanced gtest: exit $? $(grep -E 'RACECHECK SUMMARY' "$OUT/racecheck_balanced.log" | tail -1) $(grep -E '^\[  (PASSED|FAILED)' "$OUT/racecheck_balanced.log" | tr '\n' ' ')"
echo "before ab: $(smi)"
scripts/ab.sh run-bin experiments/session25/ab_mla.txt 2
echo "end: $(smi)"
