#!/usr/bin/env bash
# Session 32, call 4 (H200): variants of the clustered build, each a kbench binary built with one
# constant changed (never landed): n64 / n128 (the unscaled and per-tensor wgmmas 64 / 128 wide
# instead of the tile's 256, cuBLASLt's bf16 kernel issues 64-wide ones), noturns (groupwise's
# consumer warpgroups issue without taking turns); against the landed build (new), both orders.
source "$(dirname "$0")/../session25/common.sh"
for b in new n64 n128 noturns; do unpack .ab/bin/$b.xz /tmp/b/$b; done
R=/tmp/res; mkdir -p $R
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
run() { /tmp/b/$1 --testlist experiments/session32/variants.txt --output_path "$R/var_$1_$2.csv" >"$R/var_$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
for b in new n64 n128 noturns; do run $b 1; done
for b in noturns n128 n64 new; do run $b 2; done
kill $dmon
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res/var_*.csv")):
    e = os.path.basename(f)[4:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f} {r["refcheck_status"]} {r["sm_clock_mhz"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
tar czf "$OUT/results4.tgz" -C $R .
echo "end: $(smi)"
