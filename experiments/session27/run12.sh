#!/usr/bin/env bash
# Session 27, call 12: the final code (the gathers' key loop shared by bf16 and fp8): the MLA GPU
# tests, racecheck and memcheck on fa3's fp8 lines and the bf16 ones of session 25.
source "$(dirname "$0")/../session25/common.sh"
KB=/work/main/build/src/app/kbench
unpack .ab/bin/fi.xz "$KB"
unpack build/carry/gpu_tests.xz /tmp/b/gpu_tests
timeout 200 /tmp/b/gpu_tests --gtest_filter='*Mla*' >"$OUT/gtest_mla.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_mla.log" | tr '\n' ' ')"
for list in experiments/session27/racecheck_mla_fp8.txt experiments/session25/racecheck_mla.txt; do
  for tool in racecheck memcheck; do
    timeout 150 compute-sanitizer --tool $tool --print-limit 10 "$KB" --testlist $list >"$OUT/${tool}_$(basename $list .txt).log" 2>&1
    echo "$tool $list exit $?: $(grep -E 'SUMMARY|Backends' "$OUT/${tool}_$(basename $list .txt).log" | tr '\n' ' ')"
  done
done
echo "end: $(smi)"
