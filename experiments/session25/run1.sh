#!/usr/bin/env bash
# Session 25, call 1: the two wip branches (MLA fa3 TMA pages; fa3 head 256 on 80-key tiles) on a GPU:
# kernel tests, sanitizers, A/B against main in one call.
source "$(dirname "$0")/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/s25.xz /tmp/b/kbench
timeout 180 /tmp/b/gt --gtest_filter="${GTEST_FILTER:-*Mla*:PrefillKernels.*}" >"$OUT/gtest.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest.log" | head -3 | tr '\n' ' ')"; grep -E '^\[  FAILED' "$OUT/gtest.log" | head -20
for tool in memcheck racecheck; do
  for list in experiments/session25/mla_sanitize.txt experiments/session25/prefill_sanitize.txt; do
    log=$OUT/${tool}_$(basename "$list" .txt).log
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 /tmp/b/kbench --testlist "$list" >"$log" 2>&1
    echo "$tool $(basename "$list"): exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1) refcheck-fail: $(grep -ci 'refcheck.*fail\|mismatch' "$log")"
  done
done
echo "before ab: $(smi)"
scripts/ab.sh run-bin experiments/session25/ab.txt 2
echo "end: $(smi)"
