# --gpus all against one GPU (issue 15; bench/run.sh hook on a machine with several GPUs): the
# prefill testlist run both ways, wall times, and the two CSVs compared row by row.
testlist=bench/attention/prefill/prefill_h100.txt
nvidia-smi -L
for mode in one all; do
  extra=()
  [ "$mode" = all ] && extra=(--gpus all)
  rm -f "$OUT/prefill_$mode.csv"
  echo "\$ kbench --testlist $testlist ${extra[*]} --output_path prefill_$mode.csv"
  start=$(date +%s.%N)
  "$KBENCH" --testlist "$testlist" "${extra[@]}" --output_path "$OUT/prefill_$mode.csv" >"$OUT/prefill_$mode.log" 2>&1
  status=$?
  end=$(date +%s.%N)
  echo "gpus $mode: exit $status, wall $(python3 -c "print(f'{$end - $start:.1f}')") s" | tee -a "$OUT/wall_times.txt"
  grep -E "Testlist summary|Running .* cases over" "$OUT/prefill_$mode.log"
done
python3 - "$OUT/prefill_one.csv" "$OUT/prefill_all.csv" <<'PY' | tee -a "$OUT/wall_times.txt"
import csv, sys
one, spread = (list(csv.DictReader(open(p))) for p in sys.argv[1:3])
key = lambda r: (r["routine"], r["backend"], r["batch_size"], r["s_qo"], r["s_kv"], r["causal"], r["case_tag"])
print(f"rows: one GPU {len(one)}, --gpus all {len(spread)}; same cases in the same order: {[key(r) for r in one] == [key(r) for r in spread]}")
PY
"$KBENCH" compare "$OUT/prefill_one.csv" "$OUT/prefill_all.csv" 2>&1 | tail -4 | tee -a "$OUT/wall_times.txt"
