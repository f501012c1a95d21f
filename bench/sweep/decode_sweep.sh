# Seed 003's decode sweep (samples/decode_sweep.txt) for the plot report (bench/run.sh hook):
#   python3 scripts/plot_report.py decode_sweep.csv --out report/
# DECODE_SWEEP_LINES: a regex picking the sweep's lines (default: all five quantisation combinations).
sweep=$OUT/decode_sweep_testlist.txt
grep -E -- "${DECODE_SWEEP_LINES:-.}" samples/decode_sweep.txt | grep -v '^#' >"$sweep"
echo "\$ kbench --testlist samples/decode_sweep.txt (lines matching '${DECODE_SWEEP_LINES:-.}') --baseline_csv decode_sweep_seed.csv --output_path decode_sweep.csv --json decode_sweep.json"
rm -f "$OUT/decode_sweep.csv" "$OUT/decode_sweep_seed.csv"
timeout "${DECODE_SWEEP_TIMEOUT:-240}" "$KBENCH" --testlist "$sweep" --baseline_csv "$OUT/decode_sweep_seed.csv" \
  --output_path "$OUT/decode_sweep.csv" --json "$OUT/decode_sweep.json" >"$OUT/decode_sweep.log" 2>&1
echo "decode sweep exit status: $?"
tail -3 "$OUT/decode_sweep.log"
