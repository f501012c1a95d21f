#!/usr/bin/env bash
# Session 28, call 6 (the final code: TMA boxes of >= 8 keys, the per-row gather unrolled by 8): the
# prefill GPU tests, memcheck and racecheck on both paged loaders, issue 20's prefill grid with
# FlashInfer built, and the issue-4 prefill testlists again (no regression), clocks and power beside.
source "$(dirname "$0")/../session25/common.sh"
mkdir -p "$OUT/grid" "$OUT/noreg"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack build/carry/kbench_fi.xz /work/main/build/src/app/kbench
kb=/work/main/build/src/app/kbench
timeout 240 /tmp/b/gt --gtest_filter='*Prefill*:-Isolation.*' >"$OUT/gtest_prefill.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_prefill.log" | tr '\n' ' ')"
for tool in memcheck racecheck; do
  cat experiments/session28/sanitize.txt experiments/session28/sanitize_rows.txt >/tmp/sanitize_all.txt
  timeout 200 compute-sanitizer --tool $tool --print-limit 10 $kb --testlist /tmp/sanitize_all.txt >"$OUT/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'SUMMARY|Backends' "$OUT/$tool.log" | tr '\n' ' ')"
done
nvidia-smi dmon -s pc -d 1 >"$OUT/grid/dmon.txt" 2>&1 &
dmon=$!
timeout 330 $kb --testlist bench/attention_grid/prefill_grid.txt --output_path "$OUT/grid/prefill_grid.csv" >"$OUT/grid/prefill_grid.log" 2>&1
echo "grid exit $?: $(grep -c '^\[PERF\]' "$OUT/grid/prefill_grid.log") perf rows; $(grep -E 'Backends' "$OUT/grid/prefill_grid.log" | tail -1)"
kill $dmon
for list in prefill_h100 prefill_paged_sweep_h100; do
  timeout 120 $kb --testlist bench/attention/prefill/$list.txt --output_path "$OUT/noreg/$list.csv" >"$OUT/noreg/$list.log" 2>&1
  echo "$list exit $?"
done
echo "end: $(smi)"
