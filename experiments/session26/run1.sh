#!/usr/bin/env bash
# Session 26, call 1: MLA fa3's uniform seesaw grid in clusters of row blocks sharing each KV tile by
# TMA multicast. The MLA GPU tests on the new build (clusters of up to 4), then an A/B of the same code
# with clusters of at most 1 / 2 / 4 (c1 / c2 / c4: kMaxClusterCtas), two rounds, then racecheck and
# memcheck on the cluster cases.
source "$(dirname "$0")/../session25/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/c4.xz /work/main/build/src/app/kbench
timeout 200 /tmp/b/gt --gtest_filter='*Mla*' >"$OUT/gtest_mla.log" 2>&1
echo "gtest mla exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_mla.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_mla.log" | head
scripts/ab.sh run-bin experiments/session26/ab_mla.txt 2
grep -h "INFO\] line" "$OUT"/ab/*.log | grep -v "passed" | head -5
echo "after ab: $(smi)"
for tool in racecheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool /work/main/build/src/app/kbench \
    --testlist experiments/session26/racecheck_cluster.txt >"$OUT/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'SUMMARY|Backends' "$OUT/$tool.log" | tr '\n' ' ')"
done
echo "end: $(smi)"
