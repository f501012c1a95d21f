#!/usr/bin/env bash
# Session 33, call 2 (H200): the transposed kernel with each raw box released as it is read, three
# widenings (w0: cvt.rn.f16x2.e4m3x2; w1: integer bit moves, values times 2^-8; w2: none, a timing
# bound with wrong values) against main (new4); the MLA GPU tests and compute-sanitizer on w0.
source "$(dirname "$0")/../session25/common.sh"
for b in mla2_w0 mla2_w1 mla2_w2 new4; do unpack .ab/bin/$b.xz /tmp/b/$b; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/mla2_w0 /work/main/build/src/app/kbench
R=/tmp/res2; rm -rf $R; mkdir -p $R
timeout 300 /tmp/b/gt --gtest_filter='*Mla*' >"$R/gtest_mla.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_mla.log" | tr '\n' ' ')"
grep -E '^\[  FAILED|Failure|differ' "$R/gtest_mla.log" | head -12
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool /tmp/b/mla2_w0 --testlist experiments/session33/sanitize_mla.txt >"$R/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ')"
done
run() { timeout 120 /tmp/b/$1 --testlist experiments/session33/mla_fp8.txt --output_path "$R/$1_$2.csv" >"$R/$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run mla2_w0 1; run mla2_w1 1; run mla2_w2 1; run new4 1; run new4 2; run mla2_w2 2; run mla2_w1 2; run mla2_w0 2
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res2/*.csv")):
    e = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f}{"" if r["refcheck_status"] == "passed" else " " + r["refcheck_status"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
tar czf "$OUT/results2.tgz" -C $R .
echo "end: $(smi)"
