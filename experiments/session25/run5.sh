#!/usr/bin/env bash
# Session 25, call 5: the seesaw MLA kernel with FlashInfer built: issue 19's targets; racecheck on
# the balanced-schedule test; the whole GPU test binary as time allows.
source "$(dirname "$0")/common.sh"
mkdir -p "$OUT/mla"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack build/carry_keep/fault_probe.xz /work/main/build/tests/kbench_fault_probe
unpack build/carry_keep/kbench_fi.xz /work/main/build/src/app/kbench
kb=/work/main/build/src/app/kbench
timeout 200 $kb --testlist bench/attention/mla/mla_targets.txt --output_path "$OUT/mla/mla_targets.csv" >"$OUT/mla/mla_targets.log" 2>&1
echo "mla exit $?"; grep -E '^\[PERF\]|^\[INFO\] line' "$OUT/mla/mla_targets.log" | cut -c1-160
echo "mid: $(smi)"
timeout 200 compute-sanitizer --tool racecheck --error-exitcode 99 /tmp/b/gt --gtest_filter='MlaFa3.Balanced*' >"$OUT/racecheck_balanced.log" 2>&1
echo "racecheck balanced gtest: exit $? $(grep -E 'RACECHECK SUMMARY' "$OUT/racecheck_balanced.log" | tail -1) $(grep -E '^\[  (PASSED|FAILED)' "$OUT/racecheck_balanced.log" | tr '\n' ' ')"
timeout 170 /tmp/b/gt >"$OUT/gtest_all.log" 2>&1
echo "gtest all exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_all.log" | tr '\n' ' ')"; grep -E '^\[  FAILED' "$OUT/gtest_all.log" | head; tail -2 "$OUT/gtest_all.log"
echo "end: $(smi)"
