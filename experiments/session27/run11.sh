#!/usr/bin/env bash
# Session 27, call 11: the final code, built with FlashInfer: issue 19's MLA lines
# (bench/attention/mla/mla_targets.txt: bf16 and fp8 KV, fa2 / fa3 / auto beside FlashInfer), then
# compute-sanitizer racecheck and memcheck on fa3's fp8 lines, then the whole GPU test binary but the
# isolation tests (they need the fault probe, which this call does not carry).
source "$(dirname "$0")/../session25/common.sh"
KB=/work/main/build/src/app/kbench
unpack .ab/bin/fi.xz "$KB"
unpack build/carry/gpu_tests.xz /tmp/b/gpu_tests
timeout 200 "$KB" --testlist bench/attention/mla/mla_targets.txt --output_path "$OUT/mla_targets.csv" >"$OUT/mla_targets.log" 2>&1
echo "targets exit $?"; grep -E '^\[PERF\]|Backends|ERROR' "$OUT/mla_targets.log" | cut -c1-160 | head -60
echo "after targets: $(smi)"
for tool in racecheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 20 "$KB" --testlist experiments/session27/racecheck_mla_fp8.txt >"$OUT/sanitize_$tool.log" 2>&1
  echo "$tool exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Backends" "$OUT/sanitize_$tool.log" | head -8
done
timeout 420 /tmp/b/gpu_tests --gtest_filter='-Isolation.*' >"$OUT/gtest_all.log" 2>&1
echo "gtest all exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran|DISABLED' "$OUT/gtest_all.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_all.log" | head
echo "end: $(smi)"
