#!/usr/bin/env bash
# Session 26, call 4: MLA fa3 with the TMA tile kPrefetchTiles ahead fetched into L2 (p1: 1, p2: 2)
# against main (p0), the A/B lines in two rounds; then the MLA GPU tests and racecheck / memcheck on
# the p2 build (the GPU tests' kbench).
source "$(dirname "$0")/../session25/common.sh"
scripts/ab.sh run-bin experiments/session26/ab_mla.txt 2
grep -h "INFO\] line" "$OUT"/ab/*.log | grep -v "passed" | head -5
echo "after ab: $(smi)"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/p2.xz /work/main/build/src/app/kbench
timeout 200 /tmp/b/gt --gtest_filter='*Mla*' >"$OUT/gtest_mla.log" 2>&1
echo "gtest mla exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_mla.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_mla.log" | head
for tool in racecheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool /work/main/build/src/app/kbench \
    --testlist experiments/session25/racecheck_mla.txt >"$OUT/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'SUMMARY|Backends' "$OUT/$tool.log" | tr '\n' ' ')"
done
echo "end: $(smi)"
