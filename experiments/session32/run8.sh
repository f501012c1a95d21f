#!/usr/bin/env bash
# Session 32, call 8 (H200): the split heuristic wanting streams of B in proportion to the HBM's
# bandwidth (.ab/bin/new3.xz) against the H100-tuned one (new2) on the decode shapes, orders new3,
# new2, new2, new3, the yardsticks between; the GEMM GPU tests on new3 (its split plans).
source "$(dirname "$0")/../session25/common.sh"
for b in new2 new3; do unpack .ab/bin/$b.xz /tmp/b/$b; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/new3 /work/main/build/src/app/kbench
R=/tmp/res; mkdir -p $R
python3 -c "import torch; p = torch.cuda.get_device_properties(0); print('memory clock', p.memory_clock_rate, 'kHz, bus', p.memory_bus_width, 'bits')" 2>&1 | tail -1
run() { /tmp/b/$1 --testlist experiments/session32/$3.txt --output_path "$R/$1_$2.csv" >"$R/$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run new3 1 decode; run new2 1 decode; run new3 y1 decode_yardsticks; run new2 2 decode; run new3 2 decode; run new3 y2 decode_yardsticks
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res/*.csv")):
    e = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["m"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f}{"" if r["refcheck_status"] == "passed" else " " + r["refcheck_status"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
timeout 240 /tmp/b/gt --gtest_filter='KbenchGemm*:CutlassGemm.KbenchRefchecksEndToEnd' >"$R/gtest_gemm.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_gemm.log" | tr '\n' ' ')"
grep -E '^\[  FAILED|PlanOfTheDecodeShapes' "$R/gtest_gemm.log" | head -8
tar czf "$OUT/results8.tgz" -C $R .
echo "end: $(smi)"
