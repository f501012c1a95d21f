#!/usr/bin/env bash
# Session 32, call 9 (H200), diagnostics on the landed build (new3): (1) the decode shapes in 128 x 256
# tiles split 2-6 ways (KBENCH_WGMMA_GEMM_TILES=128x256, KBENCH_WGMMA_GEMM_SPLITS) against the
# heuristic's plans; (2) whether the last wave's fill explains mm_bf16's gap to cuBLASLt (waves.txt),
# two rounds each.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/new3.xz /tmp/b/new3
R=/tmp/res; mkdir -p $R
run() { KBENCH_WGMMA_GEMM_TILES=$1 KBENCH_WGMMA_GEMM_SPLITS=$2 /tmp/b/new3 --testlist experiments/session32/$4.txt --output_path "$R/${4}_${1:-h}_${2:-h}_$3.csv" >"$R/${4}_${1:-h}_${2:-h}_$3.log" 2>&1 || echo "$1 $2 exit $?"; }
for r in 1 2; do
  run "" "" $r decode_tiles
  for s in 2 3 4 6; do run 128x256 $s $r decode_tiles; done
  run "" "" $r waves
done
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res/*.csv")):
    e = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["m"], r["backend"]), []).append(f'{e.split("_", 1)[1] if e.startswith("waves") else e[13:]} {float(r["median_time"]) * 1000:.1f}{"" if r["refcheck_status"] == "passed" else " " + r["refcheck_status"]} {r["sm_clock_mhz"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
tar czf "$OUT/results9.tgz" -C $R .
echo "end: $(smi)"
