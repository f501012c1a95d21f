#!/usr/bin/env bash
# Session 26, call 5: MLA fa3's balanced schedule with a request's row blocks side by side (the same
# keys on consecutive CTAs: "side") against main (p0), two rounds; then the MLA GPU tests, racecheck
# on the balanced-schedule test and on racecheck_mla.txt, memcheck on racecheck_mla.txt.
source "$(dirname "$0")/../session25/common.sh"
scripts/ab.sh run-bin experiments/session26/ab_balanced.txt 2
grep -h "INFO\] line" "$OUT"/ab/*.log | grep -v "passed" | head -5
echo "after ab: $(smi)"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/side.xz /work/main/build/src/app/kbench
timeout 200 /tmp/b/gt --gtest_filter='*Mla*' >"$OUT/gtest_mla.log" 2>&1
echo "gtest mla exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_mla.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_mla.log" | head
timeout 200 compute-sanitizer --tool racecheck /tmp/b/gt --gtest_filter='MlaFa3.BalancedScheduleMatchesTheReference' \
  >"$OUT/racecheck_balanced.log" 2>&1
echo "racecheck balanced exit $?: $(grep -E 'SUMMARY|PASSED|FAILED' "$OUT/racecheck_balanced.log" | tr '\n' ' ')"
for tool in racecheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool /work/main/build/src/app/kbench \
    --testlist experiments/session25/racecheck_mla.txt >"$OUT/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'SUMMARY|Backends' "$OUT/$tool.log" | tr '\n' ' ')"
done
echo "end: $(smi)"
