#!/usr/bin/env bash
# Session 33, call 9 (H200): keys permuted 0 5 1 4 2 7 3 6 within each 8-row group (raw loads and V
# stores conflict-free without swapping halves), S^T's chunk groups one (p1) or two (p2, 88 bytes of
# spills) left in flight, against call 7's mla5 and main (new4); timing only.
source "$(dirname "$0")/../session25/common.sh"
for b in mla6_p1 mla6_p2 mla5 new4; do unpack .ab/bin/$b.xz /tmp/b/$b; done
R=/tmp/res9; rm -rf $R; mkdir -p $R
run() { timeout 120 /tmp/b/$1 --testlist experiments/session33/mla_fp8.txt --output_path "$R/$1_$2.csv" >"$R/$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run mla6_p1 1; run mla6_p2 1; run mla5 1; run new4 1; run new4 2; run mla5 2; run mla6_p2 2; run mla6_p1 2
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res9/*.csv")):
    e = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f}{"" if r["refcheck_status"] == "passed" else " " + r["refcheck_status"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
tar czf "$OUT/results9.tgz" -C $R .
echo "end: $(smi)"
