#!/usr/bin/env bash
# Session 26, call 6: the final code built with FlashInfer (fi, KBENCH_WITH_FLASHINFER=ON): A/B of the
# balanced schedule with a request's row blocks side by side against main (p0), two rounds; then
# issue 19's MLA lines (bench/attention/mla/mla_targets.txt), one run, fa3 beside FlashInfer.
source "$(dirname "$0")/../session25/common.sh"
scripts/ab.sh run-bin experiments/session26/ab_balanced.txt 2
grep -h "INFO\] line" "$OUT"/ab/*.log | grep -v "passed" | head -5
tar -C "$OUT" -cJf "$OUT/ab_balanced.tar.xz" ab && rm -rf "$OUT/ab"
echo "after ab: $(smi)"
/tmp/kbench-ab-bin/fi --testlist bench/attention/mla/mla_targets.txt --output_path "$OUT/mla_targets.csv" >"$OUT/mla_targets.log" 2>&1
echo "targets exit $?"; grep -E '^\[PERF\]|Backends' "$OUT/mla_targets.log" | head -60
echo "end: $(smi)"
