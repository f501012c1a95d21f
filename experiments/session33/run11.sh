#!/usr/bin/env bash
# Session 33, call 11 (H200): the transposed kernel with the producers widening V (mla8)
# against call 9's mla6_p1 and main (new4); the MLA GPU
# tests and compute-sanitizer on mla8.
source "$(dirname "$0")/../session25/common.sh"
for b in mla8 mla6_p1 new4; do unpack .ab/bin/$b.xz /tmp/b/$b; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/mla8 /work/main/build/src/app/kbench
R=/tmp/res11; rm -rf $R; mkdir -p $R
timeout 300 /tmp/b/gt --gtest_filter='*Mla*' >"$R/gtest_mla.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_mla.log" | tr '\n' ' ')"
grep -E '^\[  FAILED|Failure|differ' "$R/gtest_mla.log" | head -12
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool /tmp/b/mla8 --testlist experiments/session33/sanitize_mla.txt >"$R/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ')"
done
run() { timeout 120 /tmp/b/$1 --testlist experiments/session33/mla_fp8.txt --output_path "$R/$1_$2.csv" >"$R/$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run mla8 1; run mla6_p1 1; run new4 1; run new4 2; run mla6_p1 2; run mla8 2
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res11/*.csv")):
    e = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f}{"" if r["refcheck_status"] == "passed" else " " + r["refcheck_status"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
tar czf "$OUT/results11.tgz" -C $R .
echo "end: $(smi)"
