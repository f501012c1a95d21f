#!/usr/bin/env bash
# Session 27, call 10: fp8 widening with two syncs a tile (boxes 2, 3 and kpe read into registers before
# one sync), seesaw warpgroups on their mbarrier: racecheck on the probe lines and fa3's fp8 lines, memcheck, the MLA GPU
# tests, and the fp8 A/B lines (two rounds, timing only).
source "$(dirname "$0")/../session25/common.sh"
KB=/work/main/build/src/app/kbench
unpack .ab/bin/fi.xz "$KB"
unpack build/carry/gpu_tests.xz /tmp/b/gpu_tests
for list in experiments/session27/racecheck_seesaw_probe.txt experiments/session27/racecheck_mla_fp8.txt; do
  timeout 150 compute-sanitizer --tool racecheck --print-limit 10 "$KB" --testlist $list >"$OUT/racecheck_$(basename $list .txt).log" 2>&1
  echo "racecheck $list exit $?: $(grep -E 'RACECHECK SUMMARY|Backends' "$OUT/racecheck_$(basename $list .txt).log" | tr '\n' ' ')"
done
timeout 150 compute-sanitizer --tool memcheck "$KB" --testlist experiments/session27/racecheck_mla_fp8.txt >"$OUT/memcheck.log" 2>&1
echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|Backends' "$OUT/memcheck.log" | tr '\n' ' ')"
timeout 200 /tmp/b/gpu_tests --gtest_filter='*Mla*' >"$OUT/gtest_mla.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_mla.log" | tr '\n' ' ')"
for r in 1 2; do
  "$KB" --testlist experiments/session27/ab_fp8.txt --output_path "$OUT/ab_$r.csv" >"$OUT/ab_$r.log" 2>&1
  grep -E '^\[PERF\]' "$OUT/ab_$r.log" | sed 's/achieved //g' | cut -c1-110
done
echo "end: $(smi)"
