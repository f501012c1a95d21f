#!/usr/bin/env bash
# Session 30, call 1: fa3 with KV tiles aligned on the item's diagonal (ragged and per-row gathered
# tiles): the prefill GPU tests, compute-sanitizer on small lines of the changed paths, then the
# session-29 misses against FlashInfer's fa3 with 60 iterations in both backend orders, with this
# build and with main's (prefill as on main), one round each.
source "$(dirname "$0")/../session25/common.sh"
D=experiments/session30
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/new.xz /work/main/build/src/app/kbench
K=/work/main/build/src/app/kbench
timeout 150 /tmp/b/gt --gtest_filter='*Prefill*:*Fa3*' >"$OUT/gtest_prefill.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_prefill.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_prefill.log" | head
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --print-limit 10 $K --testlist $D/sanitize.txt >"$OUT/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'SUMMARY|Backends' "$OUT/$tool.log" | tr '\n' ' ')"
done
echo "mid: $(smi)"
unpack .ab/bin/main.xz /tmp/b/main
for r in 1; do for b in new main; do
  bin=$K; [ $b = main ] && bin=/tmp/b/main
  timeout 120 $bin --testlist $D/ab1.txt --output_path $OUT/ab1_${b}_$r.csv >$OUT/ab1_${b}_$r.log 2>&1; echo "ab1 $b $r exit $?"
done; done
grep -hE "Backends:" $OUT/ab1_*.log | sort | uniq -c
echo "end: $(smi)"
