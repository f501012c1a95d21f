#!/usr/bin/env bash
# Session 32, call 10 (H200): the DeepSeek-V3 MoE layer at 4096 and 16384 tokens, kbench's pipeline
# (new3) with its grouped GEMMs as the heuristic plans them (device groups of < 8 m-blocks on
# average: unpaired) and with clusters of 2 forced (KBENCH_WGMMA_GEMM_CLUSTER=2), two rounds.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/new3.xz /tmp/b/new3
R=/tmp/res; mkdir -p $R
run() { KBENCH_WGMMA_GEMM_CLUSTER=$1 /tmp/b/new3 --testlist experiments/session32/moe.txt --output_path "$R/moe_${1:-h}_$2.csv" >"$R/moe_${1:-h}_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run "" 1; run 2 1; run 2 2; run "" 2
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res/moe_*.csv")):
    e = os.path.basename(f)[4:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f} {r["refcheck_status"]} {r["sm_clock_mhz"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
grep -h -i "stage\|fc1\|fc2" $R/moe_h_1.log | head -20
tar czf "$OUT/results10.tgz" -C $R .
echo "end: $(smi)"
