#!/usr/bin/env bash
# Session 32, call 7 (H200): the split-K heuristic on the H200's faster HBM: the decode shapes with
# the heuristic's splits and forced 1-6 (KBENCH_WGMMA_GEMM_SPLITS), the landed build (new2), two
# rounds; the yardsticks once before and once after; the copy's bandwidth.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/new2.xz /tmp/b/new2
R=/tmp/res; mkdir -p $R
bash bench/norm/copy_bandwidth.sh; mv "$OUT/copy_bandwidth.log" $R/
/tmp/b/new2 --testlist experiments/session32/decode_yardsticks.txt --output_path "$R/yard_1.csv" >"$R/yard_1.log" 2>&1
run() { KBENCH_WGMMA_GEMM_SPLITS=$1 /tmp/b/new2 --testlist experiments/session32/decode.txt --output_path "$R/split_${1:-h}_$2.csv" >"$R/split_${1:-h}_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
for r in 1 2; do for s in "" 1 2 3 4 6; do run "$s" $r; done; done
/tmp/b/new2 --testlist experiments/session32/decode_yardsticks.txt --output_path "$R/yard_2.csv" >"$R/yard_2.log" 2>&1
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res/split_*.csv")) + sorted(glob.glob("/tmp/res/yard_*.csv")):
    e = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["m"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f}{"" if r["refcheck_status"] == "passed" else " " + r["refcheck_status"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
cat $R/copy_bandwidth.log
tar czf "$OUT/results7.tgz" -C $R .
echo "end: $(smi)"
