#!/usr/bin/env bash
# Session 33, call 1 (H200): fa3's transposed kernel for fp8 KV and <= 16 query rows (.ab/bin/mla1.xz)
# against main (new4 = 67c42b0) on the memory-bound case, orders mla1, new4, new4, mla1; the MLA GPU
# tests on mla1.
source "$(dirname "$0")/../session25/common.sh"
for b in mla1 new4; do unpack .ab/bin/$b.xz /tmp/b/$b; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/mla1 /work/main/build/src/app/kbench
R=/tmp/res1; rm -rf $R; mkdir -p $R
timeout 300 /tmp/b/gt --gtest_filter='*Mla*' >"$R/gtest_mla.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_mla.log" | tr '\n' ' ')"
grep -E '^\[  FAILED|Failure|differ' "$R/gtest_mla.log" | head -20
run() { timeout 120 /tmp/b/$1 --testlist experiments/session33/mla_fp8.txt --output_path "$R/$1_$2.csv" >"$R/$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run mla1 1; run new4 1; run new4 2; run mla1 2
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res1/*.csv")):
    e = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f}{"" if r["refcheck_status"] == "passed" else " " + r["refcheck_status"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
tail -3 $R/mla1_1.log
tar czf "$OUT/results1.tgz" -C $R .
echo "end: $(smi)"
