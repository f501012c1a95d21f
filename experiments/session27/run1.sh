#!/usr/bin/env bash
# Session 27, call 1: fa3 with fp8 e4m3 KV (widened in shared memory by the producer): the MLA GPU
# tests, issue 19's MLA lines with FlashInfer built (bf16 and fp8 in one run), compute-sanitizer
# racecheck and memcheck on fa3's fp8 lines.
source "$(dirname "$0")/../session25/common.sh"
KB=/work/main/build/src/app/kbench
unpack .ab/bin/fi.xz "$KB"
unpack build/carry/gpu_tests.xz /tmp/b/gpu_tests
timeout 300 /tmp/b/gpu_tests --gtest_filter='*Mla*' >"$OUT/gtest_mla.log" 2>&1
echo "gtest exit $?"; grep -E '^\[  (PASSED|FAILED) |^\[  FAILED' "$OUT/gtest_mla.log" | head -20; grep -B3 -A8 "Failure" "$OUT/gtest_mla.log" | head -40
echo "after gtest: $(smi)"
timeout 240 "$KB" --testlist bench/attention/mla/mla_targets.txt --output_path "$OUT/mla_targets.csv" >"$OUT/mla_targets.log" 2>&1
echo "targets exit $?"; grep -E '^\[PERF\]|Backends|ERROR' "$OUT/mla_targets.log" | cut -c1-160 | head -60
echo "after targets: $(smi)"
for tool in racecheck memcheck; do
  timeout 200 compute-sanitizer --tool $tool --print-limit 20 "$KB" --testlist experiments/session27/racecheck_mla_fp8.txt >"$OUT/sanitize_$tool.log" 2>&1
  echo "$tool exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Backends" "$OUT/sanitize_$tool.log" | head -8
done
echo "end: $(smi)"
