#!/usr/bin/env bash
# Session 25, call 3: the 2 isolation tests (fault probe), then with FlashInfer built: issue 19's MLA
# targets and issue 20's prefill grid (one call, every row refchecked), clocks and power beside them.
source "$(dirname "$0")/common.sh"
mkdir -p "$OUT/mla" "$OUT/grid"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
unpack build/carry/kbench_fi.xz /work/main/build/src/app/kbench
kb=/work/main/build/src/app/kbench
timeout 120 /tmp/b/gt --gtest_filter='Isolation.*' >"$OUT/gtest_isolation.log" 2>&1
echo "isolation exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_isolation.log" | tr '\n' ' ')"
nvidia-smi dmon -s pc -d 1 >"$OUT/dmon.txt" 2>&1 &
dmon=$!
timeout 200 $kb --testlist bench/attention/mla/mla_targets.txt --output_path "$OUT/mla/mla_targets.csv" >"$OUT/mla/mla_targets.log" 2>&1
echo "mla exit $?"; grep -E '^\[PERF\]|^\[INFO\] line' "$OUT/mla/mla_targets.log" | cut -c1-160
echo "mid: $(smi)"
timeout 320 $kb --testlist bench/attention_grid/prefill_grid.txt --output_path "$OUT/grid/prefill_grid.csv" >"$OUT/grid/prefill_grid.log" 2>&1
echo "grid exit $?: $(grep -c '^\[PERF\]' "$OUT/grid/prefill_grid.log") perf rows; $(grep -E '^\[INFO\] line' "$OUT/grid/prefill_grid.log" | grep -vc 'passed; .*passed' ) lines not all passed"
kill $dmon
echo "end: $(smi)"
