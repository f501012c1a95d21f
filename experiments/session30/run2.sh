#!/usr/bin/env bash
# Session 30, call 2 (the final prefill code: KV tiles aligned on the item's diagonal): issue 20's
# prefill grid with FlashInfer built (50 iterations a point), clocks and power beside, then the
# issue-4 paged prefill sweep (no regression against its committed figures).
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/new.xz /work/main/build/src/app/kbench
kb=/work/main/build/src/app/kbench
nvidia-smi dmon -s pc -d 1 >"$OUT/dmon.txt" 2>&1 &
dmon=$!
timeout 420 $kb --testlist bench/attention_grid/prefill_grid.txt --output_path "$OUT/prefill_grid.csv" >"$OUT/prefill_grid.log" 2>&1
echo "grid exit $?: $(grep -c '^\[PERF\]' "$OUT/prefill_grid.log") perf rows; $(grep -E 'Backends' "$OUT/prefill_grid.log" | tail -1)"
kill $dmon
echo "mid: $(smi)"
for list in prefill_paged_sweep_h100; do
  timeout 120 $kb --testlist bench/attention/prefill/$list.txt --output_path "$OUT/$list.csv" >"$OUT/$list.log" 2>&1
  echo "$list exit $?: $(grep -E 'Backends' "$OUT/$list.log" | tail -1)"
done
echo "end: $(smi)"
