#!/usr/bin/env bash
# Session 39, call 9 (H200): fa3's bf16 memory-bound time across processes (call 8: 288.6-329.1 us,
# FlashInfer's 286-299): three processes, each running the row four times (new inputs each line),
# to tell per-process from per-allocation. Carry .ab/bin (sch).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res9; rm -rf $R; mkdir -p $R
unpack_bins
for p in 1 2 3; do
  timeout 90 /tmp/b/sch --testlist experiments/session39/repeat4.txt --output_path $R/process_$p.csv >$R/process_$p.log 2>&1
  python3 - "$R/process_$p.csv" "$p" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("process", sys.argv[2], " ".join(f"{r['case_tag']}:{r['backend']}={float(r['median_time'])*1000:.1f}" for r in rows))
PY
done
tar czf "$OUT/results9.tgz" -C "$R" .
