#!/usr/bin/env bash
# Session 32, call 6 (H200): the cluster paths compiled out of the instantiations that never run in
# clusters (.ab/bin/new2.xz: the 64 x 128 decode tiles, FP4) against the landed build (new) and main,
# orders new2, main, new, new, main, new2; the GEMM GPU tests and memcheck / racecheck on the
# new2 build.
source "$(dirname "$0")/../session25/common.sh"
for b in main new new2; do unpack .ab/bin/$b.xz /tmp/b/$b; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/new2 /work/main/build/src/app/kbench
R=/tmp/res; mkdir -p $R
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
run() { /tmp/b/$1 --testlist experiments/session32/groupwise.txt --output_path "$R/gw_$1_$2.csv" >"$R/gw_$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run new2 1; run main 1; run new 1; run new 2; run main 2; run new2 2
kill $dmon
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res/gw_*.csv")):
    e = os.path.basename(f)[3:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["m"] if "m" in r else "", r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f} {r["refcheck_status"][:4]} {r["sm_clock_mhz"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
timeout 240 /tmp/b/gt --gtest_filter='KbenchGemm*:CutlassGemm.KbenchRefchecksEndToEnd' >"$R/gtest_gemm.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_gemm.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$R/gtest_gemm.log" | head -8
for tool in memcheck racecheck; do
  KBENCH_WGMMA_GEMM_TILES=128x256 KBENCH_WGMMA_GEMM_CLUSTER=2 timeout 100 compute-sanitizer --tool $tool /tmp/b/new2 --testlist experiments/session32/sanitize_cases.txt >"$R/$tool.log" 2>&1
  echo "$tool 128x256 exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ') refcheck passed: $(grep -c 'passed' "$R/$tool.log")"
  KBENCH_WGMMA_GEMM_TILES=64x128 timeout 100 compute-sanitizer --tool $tool /tmp/b/new2 --testlist experiments/session32/sanitize_cases.txt >"$R/${tool}_64x128.log" 2>&1
  echo "$tool 64x128 exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/${tool}_64x128.log" | tr '\n' ' ') refcheck passed: $(grep -c 'passed' "$R/${tool}_64x128.log")"
done
tar czf "$OUT/results6.tgz" -C $R .
echo "end: $(smi)"
